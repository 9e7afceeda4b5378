#!/usr/bin/env python3
"""Writes docs/benchmarks.md from what bench/run measured. Standard library only.

Usage: report.py RESULTS_DIR LARGE_WORKSPACE OUTPUT
RESULTS_DIR holds hyperfine.json, policy-{empty,large}.json, rss-{empty,large}.txt,
bwrap-status, mode, commit and workspace.json (the generator's manifest).
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


def ms(seconds):
    return f"{seconds * 1000:.2f}"


def count(n):
    return f"{n:,}".replace(",", " ")


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
            "measured in one `hyperfine -N` invocation; compare ratios, not absolute times.", "",
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
            "This is not the whole tree's PSS that the anchors' 4 MiB target speaks of."]

    if os.path.exists(NOTES):
        with open(NOTES) as f:
            out += ["", "## Notes", "", f.read().strip()]

    out += ["", "## How to reproduce", "", "```", "./bench/run          # full run, a few minutes",
            "./bench/run --quick  # a few runs, to check the harness", "```", "",
            "It installs what is missing (apt-get), builds `pi-sandbox`, generates `<large-ws>`",
            "once (cached in `$TMPDIR` by the generator's hash) and rewrites this file.", ""]

    text = "\n".join(out)
    # This machine's paths must not leak into a committed file.
    for path in (results_dir, large_ws, os.path.expanduser("~")):
        assert len(path) < 2 or path not in text, f"report would contain {path}"
    with open(output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
