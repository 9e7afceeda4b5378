#!/usr/bin/env bash
# attempt: ~/.ssh/id_rsa bind-mounted onto a file of the workspace before the command starts: read and rewrite the key through it
# layer: scan at start: a mount point in a readable place that is a credential's inode (/proc/self/mountinfo) is masked
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  : >"$WS/bound"
}

attempt() {
  # The bind is made in a mount namespace of its own (a user namespace too when not root), where
  # pi-sandbox then starts: nothing is left mounted on the host whatever happens.
  local ns=(unshare -m)
  [ "$(id -u)" = 0 ] || ns=(unshare -rm)
  capture "${ns[@]}" /bin/bash -c 'mount --bind "$1" "$2" && cd "$3" && shift 3 && exec "$@"' \
    bash "$FAKE_HOME/.ssh/id_rsa" "$WS/bound" "$WS" \
    env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" -- /bin/bash -c "$READ_EACH
$TRY_PRELUDE
try_write bound" bash bound
  expect_rc 0
  refute "$CREDENTIAL_MARKER"
  expect_lines "READ bound: "
  expect_refused "write bound" "Read-only file system" "Permission denied"
  expect_err "warning: $WS/bound is the credential $FAKE_HOME/.ssh/id_rsa under another name"
}

run_attempt "$@"
