#!/usr/bin/env bash
# attempt: a nested user namespace (`unshare -Ur`, `unshare(CLONE_NEWUSER)`) to regain every capability over new namespaces
# layer: seccomp (new user namespaces → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try 'try unshare -Ur true
try unshare -Urm true'
  expect_refused "unshare -Ur true" "Operation not permitted"
  expect_refused "unshare -Urm true" "Operation not permitted"
  inside_sc unshare:user
  expect_sc unshare:user "EPERM (Operation not permitted)"
}

run_attempt "$@"
