#!/usr/bin/env python3
"""`pi-sandbox run -- /bin/true` next to the namespace floor and minimal bubblewrap, spaced.

Measures, in one invocation and interleaved in a random order each round, with a random
0.1-0.25 s pause before each call (the way an agent spaces its commands; back-to-back loops
such as hyperfine's hide waits that end in the kernel between calls):
  - `unshare -Urmnp --fork /bin/true` (the floor);
  - minimal bubblewrap, when `bwrap` runs here;
  - for each binary given: `BINARY run --cwd WORKSPACE -- /bin/true`.
Each call is spawned with posix_spawn(3) and waited for, timed from just before the spawn to
the end of the wait. Prints one Markdown table: median and mean per command, and each median
as a multiple of the floor's and of bubblewrap's. Times are wall-clock milliseconds on this
machine: compare ratios within one run.

usage: bench/run_spaced.py --workspace DIR [--runs N] NAME=BINARY [NAME=BINARY ...]
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import time

FLOOR = ["unshare", "-Urmnp", "--fork", "/bin/true"]
BWRAP = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
         "--die-with-parent", "/bin/true"]


def timed(argv):
    """Milliseconds from the spawn of `argv` (stdout and stderr to /dev/null) to its exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        actions = [(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)]
        start = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
        _, status = os.waitpid(pid, 0)
        elapsed = (time.perf_counter() - start) * 1000
    finally:
        os.close(devnull)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("binaries", nargs="+", help="NAME=BINARY")
    args = parser.parse_args()
    commands = [("`" + " ".join(FLOOR) + "` (the floor)", FLOOR)]
    if shutil.which("bwrap") and subprocess.run(BWRAP, capture_output=True).returncode == 0:
        commands.append(("minimal bubblewrap", BWRAP))
    for spec in args.binaries:
        name, binary = spec.split("=", 1)
        commands.append((f"`pi-sandbox run -- /bin/true`, {name}",
                         [binary, "run", "--cwd", args.workspace, "--", "/bin/true"]))
    samples = {label: [] for label, _ in commands}
    for _, argv in commands:  # one warm-up each: page cache, the binary's first start
        timed(argv)
    for _ in range(args.runs):
        order = list(commands)
        random.shuffle(order)
        for label, argv in order:
            time.sleep(random.uniform(0.1, 0.25))
            samples[label].append(timed(argv))
    floor = statistics.median(samples[commands[0][0]])
    bwrap = statistics.median(samples["minimal bubblewrap"]) \
        if "minimal bubblewrap" in samples else None
    print(f"Runs per command: {args.runs}, each call after a pause of 0.1-0.25 s.\n")
    print("| command | median ms | mean ± σ ms | × floor | × bubblewrap |")
    print("| --- | --- | --- | --- | --- |")
    for label, _ in commands:
        values = samples[label]
        median = statistics.median(values)
        vs_bwrap = f"{median / bwrap:.2f}×" if bwrap else "–"
        print(f"| {label} | {median:.2f} | {statistics.mean(values):.2f} ± "
              f"{statistics.stdev(values):.2f} | {median / floor:.2f}× | {vs_bwrap} |")


if __name__ == "__main__":
    main()
