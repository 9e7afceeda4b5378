#!/usr/bin/env bash
# attempt: system calls through the x32 ABI (`nr + 0x40000000`) and the i386 ABI (`int 0x80`), whose numbers a filter written for x86_64 would misread
# layer: seccomp (a foreign architecture or the x32 ABI kills the process: SIGSYS, exit 159)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  [ "$(uname -m)" = x86_64 ] || skip "x86_64 only"
  inside_sc x32
  expect_rc 159
  refute "x32: OK"
  inside_sc int80
  expect_rc 159
  refute "int80: OK"
}

run_attempt "$@"
