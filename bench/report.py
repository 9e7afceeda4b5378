#!/usr/bin/env python3
"""Writes docs/benchmarks.md from what bench/run measured. Standard library only.

Usage: report.py RESULTS_DIR LARGE_WORKSPACE OUTPUT
RESULTS_DIR holds hyperfine.json, policy-{empty,large}.json, rss-{empty,large}.txt,
phases-{empty,large}.txt (PI_SANDBOX_TRACE_PHASES=1 output, one block per run), bwrap-status, mode, commit and workspace.json (the generator's manifest), and what
bench/network.sh wrote: network-status, network-params.json, network-samples.txt,
network-pss.jsonl, network-load.txt, and what bench/npm.sh wrote: npm.json.
LARGE_WORKSPACE is only used to turn the policy's absolute paths into relative ones.
"""
import datetime
import json
import os
import statistics
import sys

BASELINE = "unshare -Urmnp --fork /bin/true"
EMPTY = "pi-sandbox run --cwd <scratch>/ws -- /bin/true"
LARGE = "pi-sandbox run --cwd <large-ws> -- /bin/true"
TARGET = 1.6  # ../shared/bench/anchors.md, "What this project aims for"
NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.md")
NETWORK_NOTES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "network-notes.md")
# ../shared/bench/anchors.md, "What this project aims for", and issue 5 "Benchmark".
CONNECT_RATIO_TARGET = 0.75
# The agent's-path targets (docs/benchmarks.md, Network): every proxied path at least this
# fraction of direct in throughput, and absolute-form's kept-alive first byte within this many
# ms of direct.
PATH_RATIO_TARGET = 0.90
KEPT_ABSOLUTE_TARGET_MS = 0.1
FIRST_BYTE_TARGET_MS = 0.3
PSS_TARGET_MIB = 4.0
BIG_BYTES = 100 * 1024 * 1024
NETWORK_PATHS = {  # net_client.sh's names → what the report calls them
    "direct": ("direct, no proxy", "--noproxy '*'"),
    "connect": ("CONNECT", "-x http://127.0.0.1:3128 --proxytunnel"),
    "absolute": ("absolute-form", "-x http://127.0.0.1:3128"),
    "socks5h": ("SOCKS5", "-x socks5h://127.0.0.1:1080"),
}


def ms(seconds):
    return f"{seconds * 1000:.2f}"


def count(n):
    return f"{n:,}".replace(",", " ")


def network_runs(pss_samples):
    """net_pss.py's samples grouped by run (label "ROUND KIND PATH...")."""
    runs = {}
    for sample in pss_samples:
        runs.setdefault(sample["label"], []).append(sample)
    return runs


def run_cpu_ms(samples):
    """The supervisor's CPU time between the last sample before the command's .start and the
    first after its .end (ms), or None when the run had no sample on one side. (Later samples
    may miss the CPU time of the proxy's thread, which ends with the command.)"""
    before = [s["cpu_ns"] for s in samples if s["phase"] == 0]
    after = [s["cpu_ns"] for s in samples if s["phase"] == 2]
    if not before or not after:
        return None
    return (after[0] - before[-1]) / 1e6


def network_section(results_dir):
    """The "Network" section: bench/network.sh's samples against direct and the targets."""
    def path_of(name):
        return os.path.join(results_dir, name)

    out = ["", "## Network", ""]
    if not os.path.exists(path_of("network-status")):
        return out + ["Not measured (this run did not include bench/network.sh)."]
    with open(path_of("network-status")) as f:
        status = f.read().strip()
    if status != "ok":
        return out + [f"Network: {status}."]
    with open(path_of("network-params.json")) as f:
        params = json.load(f)
    throughput, new, kept = ({p: [] for p in NETWORK_PATHS} for _ in range(3))
    kept_dropped = 0
    with open(path_of("network-samples.txt")) as f:
        for line in f:
            kind, path, value, *rest = line.split()
            if kind == "throughput":
                assert int(float(rest[0])) == BIG_BYTES, f"{path}: short download: {line}"
                throughput[path].append(float(value) / 2**20)
            elif kind == "new":
                new[path].append(float(value) * 1000)
            elif kind == "kept":
                if int(rest[0]) != 0:  # the request that opened the connection
                    kept_dropped += 1
                    continue
                kept[path].append(float(value) * 1000)
    # One kept-alive curl per path and round, whose first request opens the connection; any
    # other request that connected would mean the connection was not kept alive.
    assert kept_dropped == params["rounds"] * len(NETWORK_PATHS), "a connection was not reused"
    for path in NETWORK_PATHS:
        assert throughput[path] and new[path] and kept[path], f"no samples for {path}"
    with open(path_of("network-pss.jsonl")) as f:
        runs = network_runs(json.loads(line) for line in f if line.strip())
    with open(path_of("network-load.txt")) as f:
        load = f.read().split()

    med = {name: {p: statistics.median(v) for p, v in series.items()}
           for name, series in (("tp", throughput), ("new", new), ("kept", kept))}
    p10 = {name: {p: statistics.quantiles(v, n=10)[0] if len(v) > 1 else v[0]
                  for p, v in series.items()}
           for name, series in (("new", new), ("kept", kept))}
    # Proxy CPU per 100 MiB: each throughput run moves throughput_runs / rounds downloads.
    per_run = params["throughput_runs"] // params["rounds"]
    cpu = {p: [] for p in NETWORK_PATHS}
    for label, samples in runs.items():
        _, kind, *paths = label.split()
        ms_used = run_cpu_ms(samples)
        if kind == "throughput" and ms_used is not None:
            cpu[paths[0]].append(ms_used / per_run)

    def busy(path):  # the share of a download's wall time the proxy spends on a CPU
        return statistics.median(cpu[path]) / (100 / med["tp"][path] * 1000)

    out += ["The per-command proxy's data path against the same client without it, in one run:",
            "a private network (a veth pair to a second network namespace, as in the integration",
            "tests) with an HTTP server on `203.0.113.2` serving from memory, and `curl` as the",
            "client for every path: directly in that network (`direct`), and inside",
            "`pi-sandbox run` through the command's proxy, with `web.test` in",
            "`network.allowedDomains` (decided without asking, still resolved and its address",
            "checked). Each round runs the direct client and a `pi-sandbox run` per proxied path",
            "for the downloads and one for the first bytes, in rotating order. All times come",
            "from curl's own timers, inside the sandbox: neither curl's nor the sandbox's",
            "start-up is in them.", "",
            f"- Rounds: {params['rounds']}; 100 MiB downloads per path: "
            f"{params['throughput_runs']}; first-byte requests per path: "
            f"{params['new_runs']} on new connections, {params['kept_runs']} kept-alive",
            f"- Load average when the network part started: {load[0]} (1 min), "
            f"{load[1]} (5 min); when it ended: {load[5]} (1 min)", "",
            "| path | curl | MiB/s (median) | min–max | × direct | proxy CPU ms per 100 MiB "
            "| first byte, new connection ms | Δ direct ms | first byte, kept-alive ms "
            "| Δ direct ms |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for path, (label, flags) in NETWORK_PATHS.items():
        tp = med["tp"][path]
        direct = path == "direct"
        delta_new = med["new"][path] - med["new"]["direct"]
        delta_kept = med["kept"][path] - med["kept"]["direct"]
        cpu_text = "–" if direct or not cpu[path] else f"{statistics.median(cpu[path]):.0f}"
        out.append(
            f"| {label} | `{flags}` | {tp:.0f} | {min(throughput[path]):.0f}–"
            f"{max(throughput[path]):.0f} | {tp / med['tp']['direct']:.2f}× | {cpu_text} "
            f"| {med['new'][path]:.3f} | {'–' if direct else f'{delta_new:+.3f}'} "
            f"| {med['kept'][path]:.3f} | {'–' if direct else f'{delta_kept:+.3f}'} |")
    out += ["",
            "- **MiB/s**: `GET /100m` (100 MiB, `Content-Length`), curl's `speed_download`.",
            "- **Proxy CPU**: the supervisor's CPU time (all its threads, from "
            "`/proc/<pid>/task/*/schedstat`, read from outside) during the downloads of one run, "
            "divided by the downloads; median over the rounds. It depends less on the load "
            "than the throughput does. At the median rates the supervisor is on a CPU for "
            + ", ".join(f"{NETWORK_PATHS[p][0]} {busy(p):.0%}" for p in NETWORK_PATHS
                        if p != "direct" and cpu[p])
            + " of the download time.",
            "- **First byte, new connection**: one curl per `GET /1k`, `time_starttransfer`: "
            "the client's connect (and for `direct` its lookup of `web.test` in `/etc/hosts`), "
            "through a proxy also its handshake, its decision, its lookup and its connect "
            "upstream, then the request and the first byte of the answer.",
            "- **First byte, kept-alive**: one curl sending "
            f"{params['kept_runs'] // params['rounds'] + 1} requests on one connection, the first "
            "(which opens it) dropped: request to first byte. CONNECT and SOCKS5 reuse their "
            "tunnel; absolute-form keeps the connection to the proxy and the proxy keeps its "
            "upstream connection (docs/network.md); it still decides each request (an "
            "`allowedDomains` match on its own thread, no worker), without a lookup or an "
            "upstream connect.",
            "- The least disturbed tenth of the first-byte samples (10th percentile), Δ direct: "
            + "; ".join(f"{NETWORK_PATHS[p][0]} {p10['new'][p] - p10['new']['direct']:+.3f} ms "
                        f"new, {p10['kept'][p] - p10['kept']['direct']:+.3f} ms kept-alive"
                        for p in NETWORK_PATHS if p != "direct") + "."]

    ratio = med["tp"]["connect"] / med["tp"]["direct"]
    over = []
    for path in NETWORK_PATHS:
        if path == "direct":
            continue
        for mode, label in (("new", "new connection"), ("kept", "kept-alive")):
            delta = med[mode][path] - med[mode]["direct"]
            if delta > FIRST_BYTE_TARGET_MS:
                over.append(f"{NETWORK_PATHS[path][0]}, {label} ({delta:+.3f} ms)")
    out += ["", "Targets (`../shared/bench/anchors.md`, issue 5), medians of this run:", "",
            f"- CONNECT throughput at least {CONNECT_RATIO_TARGET:.0%} of direct: "
            f"{ratio:.1%}: **{'met' if ratio >= CONNECT_RATIO_TARGET else 'not met'}**."
            f" (Absolute-form: {med['tp']['absolute'] / med['tp']['direct']:.1%}, SOCKS5: "
            f"{med['tp']['socks5h'] / med['tp']['direct']:.1%} of direct.)",
            f"- First byte within {FIRST_BYTE_TARGET_MS} ms of direct: "
            + ("**met** on every path, new and kept-alive connections." if not over else
               f"**not met** for {'; '.join(over)}; met for the rest.")]
    path_ratios = {p: med["tp"][p] / med["tp"]["direct"] for p in NETWORK_PATHS if p != "direct"}
    low = [p for p, r in path_ratios.items() if r < PATH_RATIO_TARGET]
    kept_delta = med["kept"]["absolute"] - med["kept"]["direct"]
    out += [f"- Every proxied path at least {PATH_RATIO_TARGET:.2f}× direct in throughput: "
            + ", ".join(f"{NETWORK_PATHS[p][0]} {r:.2f}×" for p, r in path_ratios.items())
            + (": **met**." if not low else
               f": **not met** ({', '.join(NETWORK_PATHS[p][0] for p in low)}).")
            + f" Proxy CPU per 100 MiB (less load-dependent): "
            + ", ".join(f"{NETWORK_PATHS[p][0]} {statistics.median(cpu[p]):.0f} ms"
                        for p in path_ratios if cpu[p]) + ".",
            f"- Absolute-form kept-alive first byte within {KEPT_ABSOLUTE_TARGET_MS} ms of "
            f"direct: {kept_delta:+.3f} ms (10th percentile "
            f"{p10['kept']['absolute'] - p10['kept']['direct']:+.3f} ms): "
            f"**{'met' if kept_delta <= KEPT_ABSOLUTE_TARGET_MS else 'not met'}**."]

    # Memory: the throughput runs' samples while the command was downloading (phase 1).
    flowing = [s for label, samples in runs.items() if label.split()[1] == "throughput"
               for s in samples if s["phase"] == 1]
    idle = [s for samples in runs.values() for s in samples if s["phase"] != 1]
    if flowing:
        peak = max(flowing, key=lambda s: s["supervisor"]["pss"])["supervisor"]
        peak_mib = peak["pss"] / 1024
        median_mib = statistics.median(s["supervisor"]["pss"] for s in flowing) / 1024
        out.append(
            f"- Supervisor and proxy under {PSS_TARGET_MIB:.0f} MiB PSS for one command, while "
            f"a download runs: peak {peak_mib:.2f} MiB (median {median_mib:.2f} MiB): "
            f"**{'met' if peak_mib < PSS_TARGET_MIB else 'not met'}**.")
        detail = max((s for s in flowing if "by_file" in s),
                     key=lambda s: s["supervisor"]["pss"], default=None)
        out += ["", "PSS is read from `/proc/<pid>/smaps_rollup` from outside, every 50 ms, "
                f"{len(flowing)} samples while downloads ran. The supervisor is the `pi-sandbox` "
                "process itself, which hosts the proxy's threads "
                f"({max(s['supervisor']['threads'] for s in flowing)} threads at most). At the "
                f"peak: {peak['anon'] / 1024:.2f} MiB anonymous (heap, stacks, buffers) and "
                f"{peak['file'] / 1024:.2f} MiB file-backed, its share of the pages of the "
                f"binary and the shared libraries (RSS {peak['rss'] / 1024:.1f} MiB, of which "
                f"{peak['private'] / 1024:.1f} MiB mapped by no other process)."]
        if detail:
            top = list(detail["by_file"].items())[:5]
            out[-1] += (" Largest shares in one sample: "
                        + ", ".join(f"`{name}` {kib / 1024:.2f} MiB" for name, kib in top) + ".")
        if idle:
            idle_peak = max(s["supervisor"]["pss"] for s in idle) / 1024
            out.append("A file-backed page's cost is divided among the processes mapping it, so "
                       "the figure moves with what else runs: before and after the downloads "
                       "(curl, which maps libcrypto and libc too, not running) the supervisor "
                       f"reaches {idle_peak:.2f} MiB.")
        inits = [s["init"]["pss"] for s in flowing if "init" in s]
        if inits:
            both = max(s["supervisor"]["pss"] + s.get("init", {}).get("pss", 0)
                       for s in flowing) / 1024
            out.append(f"The sandbox's pid 1 (also `pi-sandbox`, outside the target) adds up to "
                       f"{max(inits) / 1024:.2f} MiB: pi-sandbox's own processes come to "
                       f"{both:.2f} MiB at most for one command.")
    else:
        out.append("- Supervisor PSS: not measured (`/proc/<pid>/smaps_rollup` not readable).")
    out += ["", "This machine has 2 CPUs, shared with whatever else runs (compilers, tests): the "
            "numbers are noisy, and only ratios within one run mean anything. Through a proxy, "
            "three busy processes (server, proxy thread, client) share the 2 CPUs where the "
            "direct path has two, so other load costs the proxied paths more than the direct "
            "one; the proxy's CPU time per 100 MiB shows its own cost."]
    if os.path.exists(NETWORK_NOTES):
        with open(NETWORK_NOTES) as f:
            out += ["", "### Where the proxy's costs come from", "", f.read().strip()]
    return out

# The phases of PI_SANDBOX_TRACE_PHASES=1 (src/core/phase_trace.hpp), in its order.
PHASES = {
    "config": "`main()` to the trusted configuration read: arguments, the workspace's real path",
    "policy": "the policy: home, toolchains on `$PATH`, protected paths",
    "session": "approvals, the network decider, the proxy's starter",
    "scan": "the workspace scanned for protected paths",
    "plan": "mount plan, Landlock rules, seccomp table, cgroup probe",
    "check": "(serve) the sandbox made ahead compared with the fresh plans",
    "clone": "the command's cgroup made, `clone3` into six new namespaces",
    "id-maps": "uid and gid maps written, Go sent",
    "go": "pid 1 wakes up on Go",
    "cgroup": "pid 1 moves itself into the v1 cgroups (writes 0 into their `tasks` files)",
    "network": "pid 1: loopback up, the proxy's listeners",
    "mounts": "pid 1: the mount plan applied (placeholders made on the host included), "
              "`pivot_root`",
    "fork": "pid 1 waits for the command order (the supervisor starts the guard), forks it",
    "confine": "the command's process: no_new_privs, Landlock, capabilities, seccomp",
    "command": "exec of `/bin/true`, its run and exit, until pid 1 reaps it",
    "teardown": "pid 1 kills what is left and exits, the namespaces go, the output drains",
    "guard": "the guard's last sweep (in pid 1 once the command is gone: guarded names, git configuration, the bounded scan for repositories the command created) and its report",
    "cleanup": "host placeholders (strict mode) and the cgroup removed",
    "exit-sent": "(serve) the worker's `exit` event written",
    "total": "`main()` to the last mark (not the process's exec and exit)",
}


PHASE_TRACE_DOC = """`PI_SANDBOX_TRACE_PHASES=1 pi-sandbox run -- COMMAND` prints, after the command, one line
per phase on stderr, `pi-sandbox: phase <name> <ms>`, then `pi-sandbox: phase total <ms>`:
CLOCK_MONOTONIC marks taken in the supervisor (configuration, policy, session, scan, plan,
clone, id maps, teardown, guard, cleanup), in pid 1 (Go received, cgroup joined, network, mount
plan applied, fork, command reaped) and in the command's process just before exec (confinement
done), which pid 1 and that process send over the launch socket. Each phase is the time since
the mark before it.
Without the variable nothing is recorded or sent. `bench/run` takes the "Phases" table from
it. In `pi-sandbox serve` the variable traces each worker from the arrival of its request (with
`check` and `exit-sent`), and serve and the worker print `pi-sandbox: phase-clock <name> <ns>`
lines (CLOCK_MONOTONIC) so that `bench/serve_exec.py --trace` measures serve's own part."""


def phase_medians(text):
    """{phase: median ms} of the blocks of `pi-sandbox: phase NAME MS` lines."""
    samples = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[:2] == ["pi-sandbox:", "phase"]:
            samples.setdefault(parts[2], []).append(float(parts[3]))
    return {name: statistics.median(values) for name, values in samples.items()}, \
        max((len(v) for v in samples.values()), default=0)


def phases_section(read):
    out = ["", "## Phases", ""]
    try:
        medians = {w: phase_medians(read(f"phases-{w}.txt")) for w in ("empty", "large")}
    except FileNotFoundError:
        return out + ["Not measured: no phase trace in this run."]
    runs = min(n for _, n in medians.values())
    if runs == 0:
        return out + ["Not measured: `PI_SANDBOX_TRACE_PHASES=1` printed no phases."]
    out += [f"Where one `pi-sandbox run -- /bin/true` spends its time, from its own phase trace",
            f"(`PI_SANDBOX_TRACE_PHASES=1`, CLOCK_MONOTONIC marks in the supervisor, in pid 1 and",
            f"in the command's process): the median of each phase over {runs} traced runs per",
            "workspace, taken after the runs above. Medians do not add up to the median",
            "total.", "",
            "| phase | empty ms | `<large-ws>` ms | what |", "| --- | --- | --- | --- |"]
    names = [n for n in PHASES if n in medians["empty"][0] or n in medians["large"][0]]
    names += [n for w in ("empty", "large") for n in medians[w][0] if n not in names]
    for name in dict.fromkeys(names):
        cells = [f"{medians[w][0][name]:.2f}" if name in medians[w][0] else "–"
                 for w in ("empty", "large")]
        out.append(f"| {name} | {cells[0]} | {cells[1]} | {PHASES.get(name, '')} |")
    return out


def limits_section(results_dir, read):
    """The per-command cost of the sandbox's cgroup (anchors: under 0.5 ms)."""
    out = ["", "## Resource limits", ""]
    status = read("cgroup-status") if os.path.exists(os.path.join(results_dir, "cgroup-status")) \
        else "not measured"
    if status != "ok":
        return out + [f"The cost of a cgroup per command: {status}."]
    results = {r["command"]: r for r in read("cgroup.json")["results"]}
    without, with_ = results["without a cgroup"], results["with a cgroup"]
    cost = with_["median"] - without["median"]
    met = cost < 0.0005
    out += ["The same unprivileged `pi-sandbox run -- /bin/true` (as `nobody`, through `setpriv`)",
            "in a cgroup delegated to that user, where each command gets a cgroup of its own",
            "(created, pid 1 placed in the pids, memory and cpu hierarchies, removed), and where it",
            "may not make one (then only `RLIMIT_NPROC` holds), in one `hyperfine -N` run:", "",
            "| command | median ms | mean ± σ ms |", "| --- | --- | --- |"]
    for name, r in (("without a cgroup", without), ("with a cgroup", with_)):
        out.append(f"| {name} | {ms(r['median'])} | {ms(r['mean'])} ± {ms(r['stddev'])} |")
    out += ["", f"The cgroup costs {cost * 1000:+.2f} ms per command (median against median); "
            f"target under 0.5 ms: **{'met' if met else 'not met'}**."]
    return out


def guard_section(read, results_dir):
    """The guard's window: how long a guarded name exists before it is moved."""
    out = ["", "## The guard's window", ""]
    if not os.path.exists(os.path.join(results_dir, "guard-window.json")):
        return out + ["Not measured in this run."]
    w = read("guard-window.json")
    if "error" in w or not w.get("n"):
        return out + [f"Not measured: {w.get('error', 'no creation was measured')}."]
    out += ["A command inside `pi-sandbox run` creates `.mcp.json` (a guarded name) "
            f"{count(w['n'])} times, while two busy loops load both CPUs",
            "(`bench/guard_window.py`). The window is the time from the return of the `open(2)` that",
            "created it until `lstat(2)` inside no longer finds it (the supervisor has moved it to",
            "the quarantine): what a host program acting on the new file must beat.", "",
            "| creations | p50 µs | p99 µs | max µs | still there after 5 s |",
            "| --- | --- | --- | --- | --- |",
            f"| {count(w['n'])} | {w['p50_us']:.0f} | {w['p99_us']:.0f} | {w['max_us']:.0f} "
            f"| {w['missed']} |"]
    return out


def npm_section(results_dir):
    """The "npm install through approvals" section (issue 13, "A benchmark row")."""
    out = ["", "## npm install through approvals", ""]
    path = os.path.join(results_dir, "npm.json")
    if not os.path.exists(path):
        return out + ["Not measured (this run did not include bench/npm.sh)."]
    with open(path) as f:
        npm = json.load(f)
    if npm["status"] != "ok":
        return out + [f"npm install: {npm['status']}."]
    runs = npm["runs"]
    once = sum(1 for r in runs if r["questions"] == 1)
    out += ["One `npm install` of a package with ten dependencies (`bench/npm_registry.py`: 11",
            "packages served over plain HTTP from `registry.test`, a public-looking address in a",
            "private network namespace, as in the Network section) through the per-command",
            "proxy, in `pi-sandbox serve` with a scripted host (`bench/npm_host.py`) that answers",
            "every `approval_request` with `allow-command` (\"Allow registry.test:80 for the rest",
            "of this command\"). `registry.test` is in no `allowedDomains`: only the answers let",
            "npm through. A new `serve`, workspace and npm cache for each run; the time is from",
            "`exec` to `exit`, the host answering at once; `direct` is the same install without",
            "pi-sandbox, straight to the registry, just before.",
            f"npm {npm['npm']}, Node.js {npm['node']}.", "",
            "| run | questions | registry requests | seconds | direct seconds | exit |",
            "| --- | --- | --- | --- | --- | --- |"]
    for i, (r, requests, direct) in enumerate(zip(runs, npm["requests"], npm["direct"]), 1):
        ended = r["exit"].get("exit_code", r["exit"].get("error", "?"))
        out.append(f"| {i} | {r['questions']} | {requests} | {r['seconds']:.2f} | {direct:.2f} "
                   f"| {ended} |")
    met = once == len(runs)
    out += ["", "Target (issue 13): exactly one question per install: "
            f"**{'met' if met else 'not met'}** ({once} of {len(runs)} runs asked once); median "
            f"{statistics.median(r['seconds'] for r in runs):.2f} s, direct "
            f"{statistics.median(npm['direct']):.2f} s."]
    return out


def unix_section(results_dir):
    """The "Unix sockets" section (issue 14): a brokered connect() against the host's."""
    out = ["", "## Unix sockets", ""]
    path = os.path.join(results_dir, "unix.json")
    if not os.path.exists(path):
        return out + ["Not measured (this run did not include bench/unix.sh)."]
    with open(path) as f:
        unix = json.load(f)
    rows = [("own socket in `/tmp`, on the host", unix["host_own"], None),
            ("own socket in the private `/tmp`, inside (brokered: helper connects)",
             unix["sandbox_own"], unix["host_own"]),
            ("host server, from the host", unix["host_server"], None),
            ("host server in `hostIPC.allowedSockets`, inside (brokered: supervisor connects)",
             unix["sandbox_allowed"], unix["host_server"])]
    out += ["`bench/unix.sh`: one Python process calls `connect()` on a Unix stream socket "
            f"{unix['host_own']['n']} times (timed around the call alone) on the host and inside "
            "`pi-sandbox run`, in this invocation. Inside, every `connect()` stops in the seccomp "
            "filter and the supervisor makes it (docs/security.md, \"Unix sockets\").", "",
            "| connect() to | median µs | p99 µs | × the host's |", "| --- | --- | --- | --- |"]
    for name, sample, base in rows:
        ratio = f"{sample['median_us'] / base['median_us']:.1f}×" if base else "1.0×"
        out.append(f"| {name} | {sample['median_us']:.1f} | {sample['p99_us']:.1f} | {ratio} |")
    return out


def run_spaced_section(results_dir):
    """`pi-sandbox run -- /bin/true` against the floor and minimal bubblewrap with the calls
    spaced as an agent spaces them (bench/run_spaced.py prints the table)."""
    out = ["", "## Run against the floor, spaced", ""]
    path = os.path.join(results_dir, "run-spaced.md")
    if not os.path.exists(path):
        return out + ["Not measured (this run did not include bench/run_spaced.py)."]
    with open(path) as f:
        out += ["`bench/run_spaced.py`: the same commands as above in the empty workspace,",
                "interleaved in a random order, each after a pause of 0.1-0.25 s as an agent",
                "spaces its commands (a back-to-back loop hides waits that end in the kernel",
                f"between calls); target: at most {TARGET}× the floor.", "", f.read().strip()]
    return out


def serve_exec_section(results_dir):
    """One `exec` through a running serve next to `unshare -Urmnp --fork /bin/true`, the calls
    spaced as an agent spaces them (bench/serve_exec.py prints the table)."""
    out = ["", "## One exec through serve", ""]
    path = os.path.join(results_dir, "serve-exec.md")
    if not os.path.exists(path):
        return out + ["Not measured (this run did not include bench/serve_exec.py)."]
    with open(path) as f:
        out += ["`bench/serve_exec.py`: one long-lived `pi-sandbox serve` per binary, each",
                "`exec` of `/bin/true` timed from the request to its `exit` event, interleaved",
                "with the floor, each call after a pause of 0.1-0.25 s; target: at most 1.0× the",
                "floor. Then the phase trace of spaced calls through a traced serve of the last",
                "binary (`--trace`: the worker's phases from the request's arrival, `fork` being",
                "the hand-over to the command's process made ahead, and serve's own part).", "",
                f.read().strip()]
    return out


def pi_tools_section(results_dir):
    """The "Pi's file tools and subagents" section (issues 15, 16): one file operation and one
    worker start through `pi-sandbox serve`, next to the same on the host."""
    out = ["", "## Pi's file tools and subagent workers", ""]
    path = os.path.join(results_dir, "pi-tools.json")
    if not os.path.exists(path):
        return out + ["Not measured (this run did not include bench/pi_tools.sh)."]
    with open(path) as f:
        tools = json.load(f)
    if "error" in tools:
        return out + [f"Not measured: {tools['error']}."]
    size = tools["file_bytes"]
    rows = [(f"`read` of a {size / 1024:.1f} KiB file: one `exec` through serve (the tool's "
             "operation)", tools["read"]),
            (f"`write` of {size / 1024:.1f} KiB: one `exec` through serve, the bytes on stdin",
             tools["write"]),
            ("the same `/bin/sh -c 'exec cat -- \"$1\"'` spawned on the host", tools["host_spawn"]),
            ("`fs.readFile` in Pi's own process (Pi's tools without pi-sandbox)", tools["host_fs"]),
            ("a subagent worker: `pi --mode rpc` through serve until it answers `get_state`",
             tools["worker"]),
            ("the same worker spawned on the host", tools["worker_host"])]
    out += ["`bench/pi_tools.sh` (`bench/pi_tools.ts`): one long-lived `pi-sandbox serve`, as the",
            "Pi extension keeps it, and the real Pi; each operation timed from the request to the",
            "exit event (a worker: to its answer), in this invocation; the file operations and the",
            "host's interleaved, each after a pause of 0.1-0.25 s as an agent spaces its calls.", "",
            "| operation | median ms | p90 ms | runs |", "| --- | --- | --- | --- |"]
    for name, sample in rows:
        out.append(f"| {name} | {sample['median_ms']:.2f} | {sample['p90_ms']:.2f} "
                   f"| {sample['n']} |")
    read, spawn = tools["read"]["median_ms"], tools["host_spawn"]["median_ms"]
    worker, host = tools["worker"]["median_ms"], tools["worker_host"]["median_ms"]
    met = "met" if read <= spawn + 2 else "not met"
    out += ["", f"A sandboxed file operation costs {read - spawn:+.1f} ms over a process on the host "
            f"({read / spawn:.1f}×), each in a sandbox of its own made ahead; target (at most the "
            f"host's spawn + 2 ms): **{met}**. A worker "
            f"starts in {worker / host:.2f}× the time of the same Pi on the host; Pi's own start "
            "dominates."]
    return out


def main():
    results_dir, large_ws, output = sys.argv[1:4]

    def read(name):
        with open(os.path.join(results_dir, name)) as f:
            return json.load(f) if name.endswith(".json") else f.read().strip()

    results = {r["command"]: r for r in read("hyperfine.json")["results"]}
    base = results[BASELINE]["median"]
    quick = read("mode") == "quick"
    runs = sorted({len(r["times"]) for r in results.values()})

    out = ["# Benchmarks", ""]
    if quick:
        out += ["> **Quick mode** (`bench/run --quick`, a few runs): these numbers only show that",
                "> the harness works. Run `./bench/run` for real ones.", ""]
    out += ["The per-command cost of `pi-sandbox run -- /bin/true` next to its neighbours, all",
            "measured in one `hyperfine -N` invocation, and the per-command proxy's data path",
            "next to the same client without it (Network); compare ratios, not absolute times.", "",
            f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            f"- Kernel: `{os.uname().release}`, {os.cpu_count()} CPUs",
            f"- pi-sandbox: commit {read('commit').replace(chr(10), ', ')}",
            f"- Runs per command: {runs[0]}" + (f"–{runs[-1]}" if len(runs) > 1 else ""),
            "", "## Per command", "",
            "| command | median ms | mean ± σ ms | user ms | system ms | × unshare |",
            "| --- | --- | --- | --- | --- | --- |"]
    for name, r in results.items():
        out.append(f"| `{name}` | {ms(r['median'])} | {ms(r['mean'])} ± {ms(r['stddev'])} "
                   f"| {ms(r['user'])} | {ms(r['system'])} | {r['median'] / base:.2f}× |")
    bwrap = read("bwrap-status")
    if bwrap != "ok":
        out += ["", f"Minimal bubblewrap: {bwrap}."]

    ratio = results[EMPTY]["median"] / base
    met = ratio <= TARGET
    out += ["", f"Target (`../shared/bench/anchors.md`): `pi-sandbox run` at most {TARGET}× "
            f"`{BASELINE}` measured in the same run, with the full default policy.",
            f"Measured: {ratio:.2f}× in an empty workspace: **{'met' if met else 'not met'}**."]
    if not met and not os.path.exists(NOTES):
        out.append("Where the time goes: not written up yet (`bench/notes.md` is included here"
                   " when it exists).")
    out += run_spaced_section(results_dir)

    policies = {w: read(f"policy-{w}.json") for w in ("empty", "large")}
    rss = {w: statistics.median(int(line) for line in read(f"rss-{w}.txt").split())
           for w in ("empty", "large")}
    manifest = read("workspace.json")
    extra = results[LARGE]["median"] - results[EMPTY]["median"]
    out += ["", "## Finding protected paths in a large workspace", "",
            f"`<large-ws>` is made by `bench/make-workspace.py`: {count(manifest['files'])} files, a",
            f"top-level git repository and {manifest['nested_repositories']} nested ones (depths 1–3),",
            "a `node_modules` tree with about 60 000 files, secrets at depths 1–6 and source trees.",
            "", "| workspace | median ms | directories read | entries seen | protected paths |",
            "| --- | --- | --- | --- | --- |"]
    for w, name in (("empty", EMPTY), ("large", LARGE)):
        scan = policies[w]["scan"]
        out.append(f"| {'`<scratch>/ws` (empty)' if w == 'empty' else '`<large-ws>`'} "
                   f"| {ms(results[name]['median'])} | {count(scan['directories_read'])} "
                   f"| {count(scan['entries_seen'])} | {len(policies[w]['protected'])} |")
    protected = {os.path.relpath(p["path"], large_ws) for p in policies["large"]["protected"]}
    missed = [s for s in manifest["secrets"] if s not in protected]
    out += ["", f"The large workspace costs {extra * 1000:+.2f} ms per command over the empty one: the",
            "scan, plus the mounts for the protected paths it finds.",
            f"Of the {len(manifest['secrets'])} secret files planted, "
            f"{len(manifest['secrets']) - len(missed)} are protected"
            + (f"; not found: {', '.join(f'`{s}`' for s in missed)}." if missed else ".")]

    out += ["", "## Memory", "",
            f"Peak RSS of the largest process of `pi-sandbox run -- /bin/true` (`/usr/bin/time -f %M`,",
            f"median): {rss['empty'] / 1024:.1f} MiB in the empty workspace, "
            f"{rss['large'] / 1024:.1f} MiB in `<large-ws>`.",
            "This is not the PSS that the anchors' 4 MiB target speaks of: that one is measured",
            "in the Network section, while data flows."]

    out += limits_section(results_dir, read)
    out += guard_section(read, results_dir)
    out += phases_section(read)

    if os.path.exists(NOTES):
        with open(NOTES) as f:
            out += ["", "## Notes", "", f.read().strip()]

    out += network_section(results_dir)
    out += npm_section(results_dir)
    out += unix_section(results_dir)
    out += serve_exec_section(results_dir)
    out += pi_tools_section(results_dir)

    out += ["", "## How to reproduce", "", "```", "./bench/run          # full run, a few minutes",
            "./bench/run --quick  # a few runs, to check the harness", "```", "",
            "It installs what is missing (apt-get), builds `pi-sandbox`, generates `<large-ws>`",
            "once (cached in `$TMPDIR` by the generator's hash) and rewrites this file.",
            "`PI_SANDBOX_BENCH_BINARY=FILE` measures FILE instead of building (the commit line",
            "above then says so). The Network part (`bench/network.sh`) needs user and network",
            "namespaces, `ip` (iproute2) and `curl`; without them its section says why it was not",
            "measured. The npm part (`bench/npm.sh`) needs the same and `npm`; without them its",
            "section says why it was not measured.", ""] + PHASE_TRACE_DOC.split("\n") + [""]

    text = "\n".join(out)
    # This machine's paths must not leak into a committed file.
    for path in (results_dir, large_ws, os.path.expanduser("~")):
        assert len(path) < 2 or path not in text, f"report would contain {path}"
    with open(output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
