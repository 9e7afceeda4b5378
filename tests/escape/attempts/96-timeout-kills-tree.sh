#!/usr/bin/env bash
# attempt: outlive `--timeout` (and SIGTERM of pi-sandbox) with children that ignore SIGTERM and run in new sessions
# layer: supervisor: on timeout or SIGTERM pid 1 kills the tree, SIGKILL after 5 s; the pid namespace dies with pid 1
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox --timeout 1 -c "trap '' TERM HUP; setsid -f sleep $TAG; sleep $TAG"
  expect_rc 124
  expect_err "timed out"
  # SIGTERM to pi-sandbox itself.
  HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" -c "trap '' TERM; setsid -f sleep $TAG; sleep $TAG" \
    </dev/null >/dev/null 2>&1 &
  local pid=$!
  sleep 0.5
  kill -TERM "$pid"
  RC=0
  wait "$pid" || RC=$?
  OUT=""
  ERR=""
  expect_rc 143
}

run_attempt "$@"
