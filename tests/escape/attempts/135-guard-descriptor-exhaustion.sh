#!/usr/bin/env bash
# attempt: exhaust the supervisor's descriptors with proxy connections held open (two processes, 1 900 each, against a limit of 2 048 descriptors), then, while they are held, create `.vscode/tasks.json` and add `core.fsmonitor` to `.git/config`, hoping the guard's openat(2) fails with EMFILE and its check is skipped; then check from inside, 1.5 s later, whether both are still there
# layer: the proxy keeps a reserve of descriptors (a connection past the cap computed from RLIMIT_NOFILE is closed at once); the guard fails closed (a check that cannot open what it checks is retried, then the command is stopped)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

# The limit pi-sandbox runs under: small, so that the attempt stays cheap (a larger one only
# takes more connections). The command inherits it.
NOFILE=2048

limited_sandbox() {
  (ulimit -n "$NOFILE" && sandbox --timeout 60 "$@")
}

attempt() {
  capture limited_sandbox -- "$PY" -c '
import os, socket, subprocess, sys, time
port = int(os.environ["HTTP_PROXY"].rstrip("/").rsplit(":", 1)[1])
hold = sys.argv[1]

def flood():
    # Holds up to 1 900 connections to the proxy, each never sending a byte (the head timeout
    # is longer than this attempt); stops at the first failure. Bounded: 20 s in all.
    held, end = [], time.monotonic() + 20
    while len(held) < 1900 and time.monotonic() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
        except OSError:
            break
        held.append(s)
    os.write(1, b"held %d\n" % len(held))
    open(hold + "-%d" % os.getpid(), "w").close()
    time.sleep(30)
    os._exit(0)

children = []
for _ in range(2):
    pid = os.fork()
    if pid == 0:
        flood()
    children.append(pid)
end = time.monotonic() + 25
while time.monotonic() < end and sum(1 for n in os.listdir(".") if n.startswith(hold)) < 2:
    time.sleep(0.05)
for n in os.listdir("."):
    if n.startswith(hold):
        os.unlink(n)
# The kernel completes a connection before the proxy accepts it: time for the proxy to take
# them all (or for the backlog to hold what it could not).
time.sleep(2)
# While the connections are held: what the guard must undo at once.
try:
    os.makedirs(".vscode", exist_ok=True)
    open(".vscode/tasks.json", "w").write("{\"tasks\": []}")
except OSError:
    pass
subprocess.run(["git", "config", "core.fsmonitor", sys.argv[2]])
time.sleep(1.5)
print("live:", os.path.exists(".vscode"), "fsmonitor" in open(".git/config").read().lower())
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
' ".hold-$TAG" "touch $HOST_DIR/pwned-$TAG"
  expect_rc 0
  # The live guarantee: undone while the command ran, not only by the last sweep.
  expect_lines "live: False False"
  expect_quarantined "$WS/.vscode"
  expect_undone "$WS/.git/config" core.fsmonitor
  # The flood reached the cap: the proxy said so (once).
  expect_err "pi-sandbox: network: closed connections past 224 open at once (or at descriptor 1792)"
  (cd "$WS" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
}

run_attempt "$@"
