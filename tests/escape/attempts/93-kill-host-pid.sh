#!/usr/bin/env bash
# attempt: signal a host process by its host pid (`kill -9 <pid>`, `kill(pid, 0)` to probe)
# layer: namespaces: a pid namespace (host pids do not exist inside)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_canary
  inside_try "try kill -9 $CANARY_PID
try kill -0 $CANARY_PID"
  expect_rc 0
  expect_refused "kill -9 $CANARY_PID" "No such process"
  expect_refused "kill -0 $CANARY_PID" "No such process"
  inside_sc "kill:$CANARY_PID,9"
  expect_sc "kill:$CANARY_PID,9" "ESRCH (No such process)"
  canary_alive || escaped "the host canary was killed"
}

run_attempt "$@"
