#!/usr/bin/env bash
# attempt: the new mount API (`fsopen`, `open_tree(OPEN_TREE_CLONE)`, `mount_setattr` clearing read-only, `move_mount`)
# layer: seccomp (the new mount API → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc fsopen open-tree:/ mount-setattr:/ "mount-setattr:$WS/.git/hooks" move-mount:/tmp,/mnt
  expect_rc 0
  local s
  for s in fsopen open-tree:/ mount-setattr:/ "mount-setattr:$WS/.git/hooks" move-mount:/tmp,/mnt; do
    expect_sc "$s" "EPERM (Operation not permitted)"
  done
}

run_attempt "$@"
