#!/usr/bin/env bash
# attempt: the workspace is the home and hostIPC.allowedSockets lists ~/.ssh/agent.sock (no agent running) and ~/ws/dev.sock (a host server): move another host socket of ~/ws over ~/.ssh/agent.sock and over ~/ws/dev.sock, bind one there, and connect to both names
# layer: mount plan (~/.ssh is read-only where the workspace is the home) and the Unix-socket broker (an allowed entry in a place the command can write, such as an ordinary directory of the home, allows nothing)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen unix "$WS/dev.sock"
  host_listen unix "$WS/other.sock"
  printf '{"hostIPC": {"allowedSockets": ["~/.ssh/agent.sock", "%s"]}}\n' "$WS/dev.sock" \
    >"$HOST_DIR/config.json"
  capture sandbox_home --config "$HOST_DIR/config.json" -- "$PY" -c '
import os, socket, sys
home = os.environ["HOME"]
agent = home + "/.ssh/agent.sock"
def step(name, action):
    try:
        action(); print(name + ": OK")
    except OSError as e:
        print(name + ":", e.errno)
def bind_own():
    s = socket.socket(socket.AF_UNIX); s.bind(agent)
def connect(path):
    c = socket.socket(socket.AF_UNIX); c.settimeout(3); c.connect(path)
step("move-to-agent", lambda: os.rename("ws/other.sock", agent))
step("bind-agent", bind_own)
step("connect-agent", lambda: connect(agent))
step("move-to-dev", lambda: os.rename("ws/other.sock", "ws/dev.sock"))
step("connect-dev", lambda: connect("ws/dev.sock"))
'
  expect_rc 0
  # EROFS for ~/.ssh, EXDEV where the kernel sees two mounts first; the name stays missing.
  expect_lines "bind-agent: 30" "connect-agent: 2" "move-to-dev: OK" "connect-dev: 13"
  case "$OUT" in
    *"move-to-agent: 30"* | *"move-to-agent: 18"*) ;;
    *) show; escaped "a host socket was moved into ~/.ssh: $OUT" ;;
  esac
  listen_saw_nothing
}

run_attempt "$@"
