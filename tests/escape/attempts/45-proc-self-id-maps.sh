#!/usr/bin/env bash
# attempt: rewrite the command's own id maps and privileges through /proc (`uid_map`, `gid_map`, `setgroups`, a lower `oom_score_adj`)
# layer: namespaces (maps written once by the supervisor) and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
try_write /proc/self/uid_map "0 0 4294967295\n"
try_write /proc/self/gid_map "0 0 4294967295\n"
try_write /proc/self/setgroups "allow\n"
try_write /proc/self/oom_score_adj "-1000\n"'
  expect_rc 0
  expect_refused "write /proc/self/uid_map" "Operation not permitted" "Permission denied"
  expect_refused "write /proc/self/gid_map" "Operation not permitted" "Permission denied"
  expect_refused "write /proc/self/setgroups" "Operation not permitted" "Permission denied"
  expect_refused "write /proc/self/oom_score_adj" "Permission denied" "Operation not permitted"
}

run_attempt "$@"
