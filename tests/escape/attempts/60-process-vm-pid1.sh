#!/usr/bin/env bash
# attempt: `process_vm_readv` and `process_vm_writev` against pid 1, and `/proc/1/mem` opened read-write
# layer: Landlock (ptrace scope) and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc vm-readv:1 vm-writev:1 mem-open:1
  expect_rc 0
  expect_sc vm-readv:1 "EPERM (Operation not permitted)"
  expect_sc vm-writev:1 "EPERM (Operation not permitted)"
  expect_sc mem-open:1 "EACCES (Permission denied)" "EPERM (Operation not permitted)"
}

run_attempt "$@"
