#!/usr/bin/env bash
# attempt: reach a host Unix socket through a symlink made in the workspace, and through a relative path from a directory beside it
# layer: the Unix-socket broker (the inode the path leads to is decided, not the name; asked as the host path)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen unix "$HOST_DIR/host.sock"
  capture sandbox -- /bin/bash -c 'ln -s "$1" link.sock && "$0" -c "$2" unixconnect:link.sock
cd "$(dirname "$1")" && "$0" -c "$2" unixconnect:host.sock' "$PY" "$HOST_DIR/host.sock" "$(pysrc sc)"
  expect_rc 0
  expect_sc "unixconnect:link.sock" "EACCES (Permission denied)" "EPERM (Operation not permitted)"
  expect_sc "unixconnect:host.sock" "EACCES (Permission denied)" "EPERM (Operation not permitted)"
  listen_saw_nothing
}

run_attempt "$@"
