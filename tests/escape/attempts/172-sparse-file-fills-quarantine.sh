#!/usr/bin/env bash
# attempt: on a workspace on another file system than the home, `truncate -s 200M d/big && mv d .vscode`: the quarantine's copy writes 200 MiB to the home's disk for a few KiB in the workspace
# layer: the quarantine copies data extents only (SEEK_DATA/SEEK_HOLE): the copy stays sparse
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/small_fs.sh
source "$(dirname "$0")/../helpers/small_fs.sh"

# shellcheck disable=SC2317 # run through private_mounts
sparse() {
  small_tmpfs "$WS" 16m
  fresh_repo "$WS"
  capture sandbox -- /bin/sh -c 'mkdir d && truncate -s 200M d/big && echo data >d/small && mv d .vscode'
  local used
  used="$(kib "$(quarantine_dir)")"
  [ "$used" -le 256 ] || { show; escaped "the quarantine takes $used KiB on the home's disk for one sparse item"; }
  expect_rc 0
  expect_quarantined "$WS/.vscode"
  local stored
  stored="$(ls -d "$(quarantine_dir)"/*/.vscode)"
  { [ "$(stat -c %s "$stored/big")" = 209715200 ] && [ "$(cat "$stored/small")" = data ]; } ||
    escaped "the quarantined copy is not the item: $(ls -l "$stored")"
}

attempt() {
  private_mounts sparse
}

in_private "$@"
run_attempt "$@"
