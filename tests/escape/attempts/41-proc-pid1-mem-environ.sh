#!/usr/bin/env bash
# attempt: write pid 1's memory (`/proc/1/mem`, outside the restrictions), read its environment (the caller's secrets) and its descriptors
# layer: Landlock (ptrace scope) and dropped capabilities: pid 1 is not traceable from the command
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  export PI_ESCAPE_SECRET="caller-secret-$TAG"
  inside_sc mem-open:1
  expect_sc mem-open:1 EACCES EPERM
  capture sandbox -c "$TRY_PRELUDE"'
try cat /proc/1/environ
try cat /proc/1/maps
try ls -l /proc/1/fd/3'
  expect_rc 0
  expect_refused "cat /proc/1/environ" "Permission denied"
  expect_refused "cat /proc/1/maps" "Permission denied"
  expect_refused "ls -l /proc/1/fd/3" "Permission denied"
  # pid 1 keeps nothing of the caller that the command does not already have.
  refute "$FAKE_KEY_MARKER"
}

run_attempt "$@"
