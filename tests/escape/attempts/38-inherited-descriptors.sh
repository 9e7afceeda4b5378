#!/usr/bin/env bash
# attempt: descriptors the caller leaks to pi-sandbox (a directory fd on `~/.ssh`, a writable fd on a host file) used from inside via `/proc/self/fd`
# layer: pid 1 closes every inherited descriptor beyond stdio before the command starts
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  echo "host file" >"$HOST_DIR/host-file"
  exec 8>>"$HOST_DIR/host-file" 9<"$FAKE_HOME/.ssh"
  inside_try '
try ls /proc/self/fd/9/
try cat /proc/self/fd/9/id_ed25519
try eval "echo pwned >&8"
try_write /proc/self/fd/8'
  exec 8>&- 9<&-
  expect_rc 0
  refute "$FAKE_KEY_MARKER"
  expect_refused "ls /proc/self/fd/9/" "No such file or directory"
  expect_refused "cat /proc/self/fd/9/id_ed25519" "No such file or directory"
  expect_refused "eval echo pwned >&8" "Bad file descriptor"
  expect_refused "write /proc/self/fd/8" "No such file or directory"
  [ "$(cat "$HOST_DIR/host-file")" = "host file" ] || escaped "the host file was written through fd 8"
}

run_attempt "$@"
