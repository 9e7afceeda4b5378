#!/usr/bin/env bash
# attempt: `io_uring_setup`, `io_uring_enter`, `io_uring_register` (io_uring performs file and socket operations that seccomp never sees)
# layer: seccomp (`io_uring_*` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc io-uring-setup io-uring-enter io-uring-register
  expect_rc 0
  expect_sc io-uring-setup "EPERM (Operation not permitted)"
  expect_sc io-uring-enter "EPERM (Operation not permitted)"
  expect_sc io-uring-register "EPERM (Operation not permitted)"
}

run_attempt "$@"
