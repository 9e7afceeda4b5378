#!/usr/bin/env python3
"""The cost of one Unix-socket connect(), for bench/unix.sh. Standard library only.

Usage:
  unix_connect.py own DIR N     binds a listener in DIR, then N times: connect, accept, close;
                                prints the median and p99 of the connect() calls in µs (JSON)
  unix_connect.py client PATH N N connects to the server at PATH (each closed at once); same
  unix_connect.py serve PATH    a server for `client`: accepts and closes until killed
"""
import json
import os
import socket
import statistics
import sys
import time


def report(samples):
    samples.sort()
    print(json.dumps({"n": len(samples), "median_us": statistics.median(samples),
                      "p99_us": samples[int(len(samples) * 0.99) - 1]}))


def own(directory, n):
    path = os.path.join(directory, "bench-%d.sock" % os.getpid())
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(128)
    samples = []
    for _ in range(n):
        c = socket.socket(socket.AF_UNIX)
        start = time.perf_counter_ns()
        c.connect(path)
        samples.append((time.perf_counter_ns() - start) / 1000)
        server.accept()[0].close()
        c.close()
    os.unlink(path)
    report(samples)


def client(path, n):
    samples = []
    for _ in range(n):
        c = socket.socket(socket.AF_UNIX)
        start = time.perf_counter_ns()
        c.connect(path)
        samples.append((time.perf_counter_ns() - start) / 1000)
        c.close()
    report(samples)


def serve(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(128)
    while True:
        server.accept()[0].close()


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "own":
        own(sys.argv[2], int(sys.argv[3]))
    elif kind == "client":
        client(sys.argv[2], int(sys.argv[3]))
    else:
        serve(sys.argv[2])
