#!/usr/bin/env bash
# attempt: `ptrace(PTRACE_ATTACH/SEIZE)` on pid 1, the sandbox's init that runs outside seccomp and Landlock (a tracer could make it run anything)
# layer: Landlock (ptrace scope) and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc ptrace-attach:1 ptrace-seize:1
  expect_rc 0
  expect_sc ptrace-attach:1 "EPERM (Operation not permitted)"
  expect_sc ptrace-seize:1 "EPERM (Operation not permitted)"
}

run_attempt "$@"
