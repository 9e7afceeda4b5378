#!/usr/bin/env bash
# attempt: AF_VSOCK sockets, which reach the hypervisor and other VMs without any network namespace in between
# layer: seccomp (`socket(AF_VSOCK)` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc socket:vsock
  expect_rc 0
  expect_sc socket:vsock "EPERM (Operation not permitted)"
}

run_attempt "$@"
