# A listener on the host for the escape battery:
#   listen.py KIND ADDR PORTFILE LOG tag=N
# KIND: tcp, udp, http (TCP, answers 200), abstract (an abstract Unix stream socket named
# ADDR), unix or unix-dgram (a Unix stream or datagram socket file at the path ADDR). Binds ADDR on a free port, writes the port (or the name) to PORTFILE, then appends
# one line to LOG per connection, datagram or request until killed. Loopback only.
import os
import socket
import sys

kind, addr, portfile, log = sys.argv[1:5]


def record(what):
    with open(log, "a") as f:
        f.write(what + "\n")


def announce(value):
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(value))
    os.rename(tmp, portfile)


if kind == "abstract":
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + addr)
    s.listen(16)
    announce(addr)
    while True:
        c, _ = s.accept()
        record("connection on @" + addr)
        c.close()

if kind in ("unix", "unix-dgram"):
    stream = kind == "unix"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if stream else socket.SOCK_DGRAM)
    s.bind(addr)
    if stream:
        s.listen(64)
    announce(addr)
    while True:
        if stream:
            c, _ = s.accept()
            record("connection on " + addr)
            c.close()
        else:
            data = s.recv(65536)
            record("datagram on %s: %r" % (addr, data[:80]))

family = socket.AF_INET6 if ":" in addr else socket.AF_INET
if not (addr.startswith("127.") or addr == "::1"):
    sys.exit("loopback addresses only")
if kind == "udp":
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, 0))
    announce(s.getsockname()[1])
    while True:
        data, peer = s.recvfrom(65536)
        record("datagram from %r: %r" % (peer, data[:80]))

s = socket.socket(family, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((addr, 0))
s.listen(64)
announce(s.getsockname()[1])
while True:
    c, peer = s.accept()
    record("connection from %r" % (peer,))
    if kind == "http":
        c.settimeout(2)
        try:
            data = c.recv(4096)
            record("request %r" % data[:200])
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nHOST-REACHED")
        except OSError:
            pass
    c.close()
