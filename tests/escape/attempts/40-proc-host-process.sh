#!/usr/bin/env bash
# attempt: find a host process (a `sleep` canary) in `/proc` by its host pid, read its memory or environment, signal it
# layer: namespaces: a new pid namespace with its own /proc
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_canary
  inside_try "
try ls /proc/$CANARY_PID
try cat /proc/$CANARY_PID/environ
try cat /proc/$CANARY_PID/mem
try kill -0 $CANARY_PID
for p in /proc/[0-9]*; do [ \"\$(cat \$p/comm 2>/dev/null)\" = sleep ] && echo SEEN \$p; done; true"
  expect_rc 0
  expect_refused "ls /proc/$CANARY_PID" "No such file or directory"
  expect_refused "cat /proc/$CANARY_PID/environ" "No such file or directory"
  expect_refused "cat /proc/$CANARY_PID/mem" "No such file or directory"
  expect_refused "kill -0 $CANARY_PID" "No such process"
  refute SEEN
  canary_alive || escaped "the host canary died"
}

run_attempt "$@"
