#!/usr/bin/env bash
# attempt: leave processes running after the command: `setsid -f`, `nohup … &`, a double fork, a process that ignores SIGTERM and SIGHUP
# layer: pid 1 kills the whole pid namespace when the command exits
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local start=$SECONDS
  capture sandbox -c "setsid -f sleep $TAG; nohup sleep $TAG >/dev/null 2>&1 &
( ( trap '' TERM HUP; exec sleep $TAG ) & ) ; echo started"
  expect_rc 0
  expect_out started
  [ $((SECONDS - start)) -lt 20 ] || escaped "the call did not return while children lived"
  # The runner checks that no `sleep $TAG` is left on the host.
}

run_attempt "$@"
