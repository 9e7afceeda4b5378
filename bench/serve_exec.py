#!/usr/bin/env python3
"""One `exec` of /bin/true through a running `pi-sandbox serve`, next to the namespace floor.

Measures, in one invocation and interleaved, with the calls spaced the way an agent spaces them
(a random 0.1-0.25 s pause before each):
  - `unshare -Urmnp --fork /bin/true` (the floor), spawned and waited for;
  - for each binary given: an `exec` of `/bin/true` written to one long-lived `serve` of that
    binary, until its `exit` event.
Prints one Markdown table: median and mean per path, and each median as a multiple of the
floor's. The times are wall-clock milliseconds on this machine: compare ratios within one run.

With --trace N, then N more calls, spaced the same way, through a `serve` of the last binary
with PI_SANDBOX_TRACE_PHASES=1: the median of each phase of the worker's trace (src/core/
phase_trace.hpp: marks in the worker and in the sandbox's pid 1 and command), of the time serve
takes to hand the request to the worker (`deliver`: serve read the request, the worker read it)
and to pass the exit on (`return`: the worker wrote its exit event, serve wrote it to the host),
and of the whole call as the host sees it.

usage: bench/serve_exec.py --workspace DIR [--runs N] [--trace N] NAME=BINARY [NAME=BINARY ...]
"""

import argparse
import json
import os
import random
import select
import statistics
import subprocess
import tempfile
import time

FLOOR = ["unshare", "-Urmnp", "--fork", "/bin/true"]


class Serve:
    """One `pi-sandbox serve` with pipes; exec() times one command until its exit event."""

    def __init__(self, binary, workspace, env=None, stderr=None):
        self.proc = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0, env=env, stderr=stderr)
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


def trace_blocks(text):
    """One dict per traced call: {phase: ms} of the worker's `phase` lines, and the clocks
    (`phase-clock NAME NS`) of serve and the worker, in ns."""
    blocks, current = [], {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 4 or parts[0] != "pi-sandbox:":
            continue
        if parts[1] == "phase-clock" and parts[2] == "serve-request":
            current = {"clock": {}}
            blocks.append(current)
        if not current:
            continue
        if parts[1] == "phase":
            current[parts[2]] = float(parts[3])
        elif parts[1] == "phase-clock":
            current["clock"][parts[2]] = int(parts[3])
    return blocks


def traced(binary, workspace, runs):
    """The phase table of `runs` spaced calls through a traced serve of `binary`."""
    with tempfile.TemporaryFile() as log:
        serve = Serve(binary, workspace, dict(os.environ, PI_SANDBOX_TRACE_PHASES="1"), log)
        serve.exec()
        seen = []
        for _ in range(runs):
            time.sleep(random.uniform(0.1, 0.25))
            seen.append(serve.exec())
        serve.close()
        log.seek(0)
        blocks = trace_blocks(log.read().decode())[1:]
    rows = {}
    for block in blocks:
        clock = block.get("clock", {})
        if not {"serve-request", "serve-exit", "worker-start"} <= clock.keys():
            continue
        start = clock["worker-start"]
        rows.setdefault("deliver", []).append((start - clock["serve-request"]) / 1e6)
        for name, ms in block.items():
            if name != "clock":
                rows.setdefault(name, []).append(ms)
        if "exit-sent" in block:
            sent = start + block["total"] * 1e6
            rows.setdefault("return", []).append((clock["serve-exit"] - sent) / 1e6)
        rows.setdefault("serve total", []).append(
            (clock["serve-exit"] - clock["serve-request"]) / 1e6)
    rows["the call, as the host sees it"] = [t * 1000 for t in seen]
    print(f"\nPhases of {len(blocks)} traced calls (PI_SANDBOX_TRACE_PHASES=1); the worker's phases"
          " follow one another, so their means add up to the mean total:\n")
    print("| phase | median ms | mean ms |")
    print("| --- | --- | --- |")
    for name, values in rows.items():
        print(f"| {name} | {statistics.median(values):.2f} | {statistics.mean(values):.2f} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--trace", type=int, default=0)
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
    if args.trace:
        traced(args.binaries[-1].split("=", 1)[1], args.workspace, args.trace)


if __name__ == "__main__":
    main()
