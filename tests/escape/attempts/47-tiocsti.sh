#!/usr/bin/env bash
# attempt: push characters into the caller's terminal input with `ioctl(TIOCSTI)` (on stdin and on /dev/tty), to run them in the host shell after the command ends
# layer: seccomp (`ioctl(TIOCSTI)` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  under_pty isatty tiocsti tiocsti-tty
  expect_sc isatty "OK True"
  expect_sc tiocsti "EPERM (Operation not permitted)"
  expect_sc tiocsti-tty "EPERM (Operation not permitted)" ENXIO
}

run_attempt "$@"
