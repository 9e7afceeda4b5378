#!/usr/bin/env python3
"""The network benchmark's HTTP server (bench/network.sh), run in the server's network
namespace. Standard library only.

Usage: net_servers.py ADDRESS PORT READY_FILE

Serves GET /100m (100 MiB) and GET /1k (1 KiB) from memory with Content-Length, HTTP/1.1
keep-alive, one thread per connection. The big body goes out in one sendall() of a
memoryview, so the copying happens in the kernel and this server is not the bottleneck.
Creates READY_FILE once it listens.
"""
import socket
import sys
import threading

BODIES = {
    "/100m": bytes(100 * 1024 * 1024),
    "/1k": bytes((i * 7 + 3) % 251 for i in range(1024)),
}
HEAD = ("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
        "Content-Length: {}\r\n{}\r\n")


def serve(conn):
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending = b""
    try:
        while True:
            while b"\r\n\r\n" not in pending:
                data = conn.recv(65536)
                if not data:
                    return
                pending += data
            head, pending = pending.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            target = lines[0].split(" ")[1] if len(lines[0].split(" ")) == 3 else ""
            close = any(l.lower().replace(" ", "") == "connection:close" for l in lines[1:])
            body = BODIES.get(target)
            if body is None:
                conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                continue
            head = HEAD.format(len(body), "Connection: close\r\n" if close else "").encode()
            if len(body) <= 65536:
                conn.sendall(head + body)  # one segment for the first-byte measurements
            else:
                conn.sendall(head)
                conn.sendall(memoryview(body))
            if close:
                return
    except (ConnectionError, OSError):
        pass
    finally:
        conn.close()


def main():
    address, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address, port))
    listener.listen(1024)
    open(ready, "w").close()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
