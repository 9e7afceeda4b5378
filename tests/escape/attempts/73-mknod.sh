#!/usr/bin/env bash
# attempt: `mknod` a device node (a copy of /dev/null's numbers, or of a disk) in the workspace and in /tmp
# layer: dropped capabilities (no CAP_MKNOD) and nodev mounts
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc "mknod:$WS/null" mknod:/tmp/null
  expect_rc 0
  expect_sc "mknod:$WS/null" "EPERM (Operation not permitted)"
  expect_sc mknod:/tmp/null "EPERM (Operation not permitted)"
  inside_try "try mknod $WS/sda b 8 0"
  expect_refused "mknod $WS/sda b 8 0" "Operation not permitted"
  host_absent "$WS/null" "$WS/sda"
}

run_attempt "$@"
