#!/usr/bin/env bash
# attempt: `userfaultfd` (user-mode only; the classic tool to win kernel races)
# layer: seccomp (`userfaultfd` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc userfaultfd
  expect_rc 0
  expect_sc userfaultfd "EPERM (Operation not permitted)"
}

run_attempt "$@"
