#!/usr/bin/env bash
# attempt: `setns` into namespaces by descriptor (the command's own, pid 1's) and `nsenter`
# layer: seccomp (`setns` → EPERM) and Landlock (pid 1's /proc entries unreachable)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc setns:mnt setns:net setns:user setns:pid
  expect_rc 0
  local k
  for k in mnt net user pid; do expect_sc "setns:$k" "EPERM (Operation not permitted)"; done
  inside_try 'try nsenter -t 1 -m true
try cat /proc/1/ns/mnt'
  expect_refused "nsenter -t 1 -m true" "Permission denied" "Operation not permitted"
  expect_refused "cat /proc/1/ns/mnt" "Permission denied"
}

run_attempt "$@"
