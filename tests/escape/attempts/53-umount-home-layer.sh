#!/usr/bin/env bash
# attempt: unmount the private home layer (and the read-only binds over `.git/hooks`, /proc, /tmp) to uncover what lies beneath: the real `~/.ssh`, writable hooks
# layer: seccomp (`umount2` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc "umount:$FAKE_HOME" "umount:$WS/.git/hooks" umount:/proc umount:/tmp umount:/
  expect_rc 0
  local t
  for t in "$FAKE_HOME" "$WS/.git/hooks" /proc /tmp /; do
    expect_sc "umount:$t" "EPERM (Operation not permitted)"
  done
  capture sandbox -c 'umount -l ~ 2>&1; cat ~/.ssh/id_ed25519 2>&1; true'
  refute "$FAKE_KEY_MARKER"
}

run_attempt "$@"
