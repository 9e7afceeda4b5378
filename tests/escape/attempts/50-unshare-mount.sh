#!/usr/bin/env bash
# attempt: a nested mount namespace (`unshare -m`, `unshare(CLONE_NEWNS)`) to rearrange mounts away from the protections
# layer: seccomp (new mount namespaces → EPERM) and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try 'try unshare -m true'
  expect_refused "unshare -m true" "Operation not permitted"
  inside_sc unshare:mount
  expect_sc unshare:mount "EPERM (Operation not permitted)"
}

run_attempt "$@"
