#!/usr/bin/env bash
# attempt: `clone3`, whose flags live in memory where seccomp cannot inspect them (new namespaces, CLONE_INTO_CGROUP)
# layer: seccomp (`clone3` → ENOSYS, so libc falls back to `clone`, which the filter inspects)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc clone3
  expect_sc clone3 "ENOSYS (Function not implemented)"
  # fork still works through the fallback.
  capture sandbox -c '(echo child) && "$0" -c "echo grandchild"' 
  expect_rc 0
  expect_lines child grandchild
}

run_attempt "$@"
