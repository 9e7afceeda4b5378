#!/usr/bin/env bash
# attempt: `mount -t tmpfs`, a bind of the workspace over /etc, and a remount of the read-only root (and of `.git/hooks`) read-write
# layer: seccomp (`mount` → EPERM) and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc mount:/tmp "bind:$WS,/etc" remount-rw:/ "remount-rw:$WS/.git/hooks"
  expect_rc 0
  expect_sc mount:/tmp "EPERM (Operation not permitted)"
  expect_sc "bind:$WS,/etc" "EPERM (Operation not permitted)"
  expect_sc remount-rw:/ "EPERM (Operation not permitted)"
  expect_sc "remount-rw:$WS/.git/hooks" "EPERM (Operation not permitted)"
  inside_try 'try mount -t tmpfs none /tmp'
  expect_refused "mount -t tmpfs none /tmp" "Operation not permitted" "must be superuser" \
    "permission denied"
}

run_attempt "$@"
