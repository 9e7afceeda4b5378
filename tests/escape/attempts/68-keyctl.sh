#!/usr/bin/env bash
# attempt: `keyctl`, `add_key`, `request_key` (the kernel keyrings are not namespaced: read or plant keys of the user session)
# layer: seccomp (`keyctl`, `add_key`, `request_key` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc keyctl add-key request-key
  expect_rc 0
  expect_sc keyctl "EPERM (Operation not permitted)"
  expect_sc add-key "EPERM (Operation not permitted)"
  expect_sc request-key "EPERM (Operation not permitted)"
}

run_attempt "$@"
