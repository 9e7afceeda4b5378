#!/usr/bin/env python3
"""Samples the memory of one `pi-sandbox run` from outside while it runs (bench/network.sh).

Usage: net_pss.py PID INTERVAL_SECONDS LABEL MARKER_DIR >> SAMPLES
PID is the supervisor (pi-sandbox itself, which hosts the proxy's threads). Every interval
until PID is gone, prints one JSON line: LABEL; the supervisor's Rss, Pss, Pss_Anon,
Pss_File and private (Private_Clean + Private_Dirty) in KiB from /proc/PID/smaps_rollup, its
thread count and the CPU time of its threads so far (cpu_ns, from their schedstat); and the
same memory figures for the sandbox's pid 1 (the supervisor's child that is also
pi-sandbox), which is the rest of pi-sandbox's own cost.
Each sample also has a phase: 0 before MARKER_DIR/.start exists, 1 while the command
measures (until MARKER_DIR/.end exists), 2 after, so the report can take the CPU time of
the measured part alone and the memory while data flows. The first sample in phase 1 also
has the supervisor's Pss by mapped file (by_file).
"""
import json
import os
import sys
import time

FIELDS = {"Pss:": "pss", "Pss_Anon:": "anon", "Pss_File:": "file", "Rss:": "rss",
          "Private_Clean:": "private", "Private_Dirty:": "private"}


def rollup(pid):
    values = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] in FIELDS:
                key = FIELDS[parts[0]]
                values[key] = values.get(key, 0) + int(parts[1])
    tasks = os.listdir(f"/proc/{pid}/task")
    values["threads"] = len(tasks)
    return values


def pss_by_file(pid):
    """Pss in KiB by mapped file (base name only: no machine paths) or [kind]."""
    totals, name = {}, None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            parts = line.split()
            if "-" in parts[0] and not parts[0].endswith(":"):
                name = os.path.basename(parts[5]) if len(parts) > 5 else "[anonymous]"
            elif parts[0] == "Pss:":
                totals[name] = totals.get(name, 0) + int(parts[1])
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def cpu_ns(pid):
    """CPU time of the process's live threads in ns (schedstat: ns on the CPU)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that just ended
    return total


def children(pid):
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def comm(pid):
    with open(f"/proc/{pid}/comm") as f:
        return f.read().strip()


def phase_now(markers):
    if os.path.exists(os.path.join(markers, ".end")):
        return 2
    return 1 if os.path.exists(os.path.join(markers, ".start")) else 0


def main():
    pid, interval, label, markers = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
    detailed = False
    while True:
        try:
            if comm(pid) != "pi-sandbox":  # still nsenter, before its exec
                time.sleep(0.005)
                continue
            # Phase 0 only when .start did not exist yet after the reading, phase 2 only when
            # .end existed already before it: their CPU times then bracket the measured part.
            before = phase_now(markers)
            sample = {"label": label, "supervisor": rollup(pid), "cpu_ns": cpu_ns(pid)}
            after = phase_now(markers)
            sample["phase"] = 0 if after == 0 else 2 if before == 2 else 1
            if sample["phase"] == 1 and not detailed:  # once per run, while data flows
                sample["by_file"] = pss_by_file(pid)
                detailed = True
            inits = [c for c in children(pid) if comm(c) == "pi-sandbox"]
            if inits:
                sample["init"] = rollup(inits[0])
        except (OSError, ValueError):
            break  # gone, or going
        print(json.dumps(sample), flush=True)
        time.sleep(interval)


if __name__ == "__main__":
    main()
