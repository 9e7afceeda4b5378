# Raw requests to the sandbox's proxy listeners, byte for byte (no client normalises the
# host), for the escape battery:
#   python3 -c "$(cat proxy.py)" SPEC...
# SPEC: `connect HOST:PORT` (HTTP CONNECT), `get URL` (absolute-form GET), `socks5h HOST PORT`
# (SOCKS5 by name), `socks5-ip4 ADDR PORT`, `socks5-ip6 ADDR PORT` (SOCKS5 by address).
# Prints `SPEC => RESULT`: the HTTP status line (plus REACHED when the body came from the
# host's test server), or `socks reply N` (0 is success).
import ipaddress
import socket
import struct
import sys

HTTP = ("127.0.0.1", 3128)
SOCKS = ("127.0.0.1", 1080)


def http(request):
    s = socket.create_connection(HTTP, timeout=15)
    s.sendall(request)
    data = b""
    while True:
        try:
            chunk = s.recv(4096)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
        if request.startswith(b"CONNECT") and b"\r\n\r\n" in data:
            break
    s.close()
    line = data.split(b"\r\n", 1)[0].decode(errors="replace")
    return line + (" REACHED" if b"HOST-REACHED" in data else "")


def socks(atyp, host, port):
    s = socket.create_connection(SOCKS, timeout=15)
    s.sendall(b"\x05\x01\x00")
    if s.recv(2) != b"\x05\x00":
        return "socks no method"
    if atyp == 3:
        addr = bytes([len(host)]) + host.encode()
    elif atyp == 1:
        addr = ipaddress.IPv4Address(host).packed
    else:
        addr = ipaddress.IPv6Address(host).packed
    s.sendall(b"\x05\x01\x00" + bytes([atyp]) + addr + struct.pack(">H", int(port)))
    reply = s.recv(262)
    if len(reply) < 2:
        return "socks closed"
    result = "socks reply %d" % reply[1]
    if reply[1] == 0:
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        try:
            if b"HOST-REACHED" in s.recv(4096):
                result += " REACHED"
        except OSError:
            pass
    return result


for spec in sys.argv[1:]:
    kind, *rest = spec.split(" ")
    try:
        if kind == "connect":
            target = rest[0]
            r = http(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
        elif kind == "get":
            url = rest[0]
            host = url.split("/")[2]
            r = http(b"GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (url.encode(), host.encode()))
        elif kind == "socks5h":
            r = socks(3, rest[0], rest[1])
        elif kind == "socks5-ip4":
            r = socks(1, rest[0], rest[1])
        elif kind == "socks5-ip6":
            r = socks(4, rest[0], rest[1])
        else:
            r = "unknown spec"
    except OSError as e:
        r = "error %s" % e
    print("%s => %s" % (spec, r), flush=True)
