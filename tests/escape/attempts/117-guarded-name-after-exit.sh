#!/usr/bin/env bash
# attempt: leave a background process (detached with setsid, ignoring SIGHUP and SIGTERM) that keeps creating `.mcp.json` and `.vscode/tasks.json` after the command's main process has exited, so that one is made after the guard's last sweep
# layer: the guard's last sweep runs once every process of the sandbox is gone (pid 1 kills them all first)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -c '
setsid bash -c "trap \"\" HUP TERM; while :; do echo x > .mcp.json; mkdir -p .vscode; echo {} > .vscode/tasks.json; done 2>/dev/null" </dev/null >/dev/null 2>&1 &
nohup bash -c "trap \"\" HUP TERM; sleep 0.2; while :; do echo y > .mcp.json; done 2>/dev/null" </dev/null >/dev/null 2>&1 &
sleep 0.3
exit 0'
  expect_rc 0
  sleep 1
  host_absent "$WS/.mcp.json" "$WS/.vscode"
  expect_err "pi-sandbox: moved $WS/.mcp.json to the quarantine ("
}

run_attempt "$@"
