#!/usr/bin/env bash
# attempt: `ioctl(TIOCLINUX)` on the terminal (console selection paste, which injects input like TIOCSTI)
# layer: seccomp (`ioctl(TIOCLINUX)` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  under_pty isatty tioclinux
  expect_sc isatty "OK True"
  expect_sc tioclinux "EPERM (Operation not permitted)"
}

run_attempt "$@"
