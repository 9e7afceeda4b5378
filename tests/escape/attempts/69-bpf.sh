#!/usr/bin/env bash
# attempt: `bpf(BPF_MAP_CREATE)` (eBPF: a large kernel attack surface)
# layer: seccomp (`bpf` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc bpf
  expect_rc 0
  expect_sc bpf "EPERM (Operation not permitted)"
}

run_attempt "$@"
