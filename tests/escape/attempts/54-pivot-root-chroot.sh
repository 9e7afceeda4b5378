#!/usr/bin/env bash
# attempt: `pivot_root` and `chroot` (to a directory where `..` leads back out)
# layer: seccomp (`pivot_root` → EPERM) and dropped capabilities (no CAP_SYS_CHROOT)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc pivot-root chroot:/tmp
  expect_rc 0
  expect_sc pivot-root "EPERM (Operation not permitted)"
  expect_sc chroot:/tmp "EPERM (Operation not permitted)"
  inside_try 'try chroot / true'
  expect_refused "chroot / true" "Operation not permitted"
}

run_attempt "$@"
