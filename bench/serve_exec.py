#!/usr/bin/env python3
"""One `exec` of /bin/true through a running `pi-sandbox serve`, next to the namespace floor.

Measures, in one invocation and interleaved, with the calls spaced the way an agent spaces them
(a random 0.1-0.25 s pause before each):
  - `unshare -Urmnp --fork /bin/true` (the floor), spawned and waited for;
  - for each binary given: an `exec` of `/bin/true` written to one long-lived `serve` of that
    binary, until its `exit` event.
Prints one Markdown table: median and mean per path, and each median as a multiple of the
floor's. The times are wall-clock milliseconds on this machine: compare ratios within one run.

usage: bench/serve_exec.py --workspace DIR [--runs N] NAME=BINARY [NAME=BINARY ...]
"""

import argparse
import json
import os
import random
import select
import statistics
import subprocess
import time

FLOOR = ["unshare", "-Urmnp", "--fork", "/bin/true"]


class Serve:
    """One `pi-sandbox serve` with pipes; exec() times one command until its exit event."""

    def __init__(self, binary, workspace):
        self.proc = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        self.workspace = workspace
        self.buffer = b""
        self.count = 0

    def exec(self):
        self.count += 1
        ident = f"b{self.count}"
        line = json.dumps({"type": "exec", "id": ident, "argv": ["/bin/true"],
                           "cwd": self.workspace}) + "\n"
        start = time.perf_counter()
        self.proc.stdin.write(line.encode())
        while True:
            while b"\n" not in self.buffer:
                select.select([self.proc.stdout], [], [])
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise RuntimeError("serve ended")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\n", 1)
            event = json.loads(raw)
            if event.get("id") == ident and event.get("type") == "exit":
                elapsed = time.perf_counter() - start
                if event.get("exit_code") != 0:
                    raise RuntimeError(f"exec failed: {event}")
                return elapsed

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def floor():
    start = time.perf_counter()
    subprocess.run(FLOOR, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("binaries", nargs="+", help="NAME=BINARY")
    args = parser.parse_args()
    serves = []
    for spec in args.binaries:
        name, binary = spec.split("=", 1)
        serves.append((name, Serve(binary, args.workspace)))
    samples = {"floor": []}
    for name, _ in serves:
        samples[name] = []
    # One warm-up call each: the first exec of a serve has no sandbox made ahead yet.
    floor()
    for _, serve in serves:
        serve.exec()
    for _ in range(args.runs):
        order = [("floor", None)] + serves
        random.shuffle(order)
        for name, serve in order:
            time.sleep(random.uniform(0.1, 0.25))
            samples[name].append(floor() if serve is None else serve.exec())
    for _, serve in serves:
        serve.close()
    base = statistics.median(samples["floor"])
    print(f"Runs per path: {args.runs}, each call after a pause of 0.1-0.25 s.\n")
    print("| path | median ms | mean ± σ ms | × floor |")
    print("| --- | --- | --- | --- |")
    rows = [("`" + " ".join(FLOOR) + "` (the floor)", samples["floor"])]
    rows += [(f"`exec` of `/bin/true` through `serve`, {name}", samples[name])
             for name, _ in serves]
    for label, values in rows:
        median = statistics.median(values)
        print(f"| {label} | {median * 1000:.2f} | {statistics.mean(values) * 1000:.2f} ± "
              f"{statistics.stdev(values) * 1000:.2f} | {median / base:.2f}× |")


if __name__ == "__main__":
    main()
