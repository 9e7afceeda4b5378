#!/usr/bin/env bash
# attempt: flood the guard's inotify queue (40 000 creations and removals in the watched workspace root, past fs.inotify.max_queued_events) and create `.mcp.json` and `.claude/commands/x.md` in the flood, hoping the events naming them are dropped; then check from inside whether they were still there a second later
# layer: the guard: a queue overflow (IN_Q_OVERFLOW) makes it check every guarded name again; the final sweep
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -- "$PY" -c '
import os, time
for i in range(20000):
    n = "f%d" % i
    open(n, "w").close()
    if i == 19000:
        # The guard may take each as soon as it appears: a failure here is its doing.
        try:
            open(".mcp.json", "w").write("{}")
            os.makedirs(".claude/commands", exist_ok=True)
            open(".claude/commands/x.md", "w").write("x")
        except OSError:
            pass
    os.unlink(n)
time.sleep(1)
print("live:", os.path.exists(".mcp.json"), os.path.exists(".claude/commands/x.md"))
'
  expect_rc 0
  expect_quarantined "$WS/.mcp.json" "$WS/.claude/commands"
  # The live guarantee: moved while the command ran, not only by the last sweep.
  expect_lines "live: False False"
  rmdir "$WS/.claude"
}

run_attempt "$@"
