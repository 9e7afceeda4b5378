#!/usr/bin/env python3
"""Measures the guard's window from inside a sandbox (docs/security.md, "The guard").

Usage (inside `pi-sandbox run`, in the workspace): guard_window.py N NAME > RESULT.json

Creates the guarded name NAME (e.g. `.mcp.json`) N times and, each time, measures how long it
exists: from the return of the open(2) that created it until lstat(2) says it is gone (the
supervisor moved it to the quarantine). Prints {"n", "p50_us", "p99_us", "max_us", "missed"}:
the percentiles in microseconds; `missed` counts the names still there after 5 s (the guard
failed: a benchmark error, not a number).
"""
import json
import os
import sys
import time


def main():
    count, name = int(sys.argv[1]), sys.argv[2]
    windows, missed = [], 0
    for _ in range(count):
        fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        start = time.perf_counter_ns()
        os.close(fd)
        deadline = start + 5_000_000_000
        while True:
            try:
                os.lstat(name)
            except FileNotFoundError:
                windows.append(time.perf_counter_ns() - start)
                break
            if time.perf_counter_ns() > deadline:
                missed += 1
                os.unlink(name)
                break
    windows.sort()

    def pct(p):
        return windows[min(len(windows) - 1, int(len(windows) * p))] / 1000 if windows else None

    json.dump({"n": len(windows), "p50_us": pct(0.50), "p99_us": pct(0.99),
               "max_us": windows[-1] / 1000 if windows else None, "missed": missed}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
