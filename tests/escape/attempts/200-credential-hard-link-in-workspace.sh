#!/usr/bin/env bash
# attempt: a hard link to ~/.ssh/id_rsa (and ~/.ssh/id_ed25519) left in the workspace before the command: read and rewrite the key through it
# layer: scan at start: a file that is a credential's inode is masked by an empty read-only file, and pointed out
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  mkdir -p "$WS/deploy"
  ln "$FAKE_HOME/.ssh/id_rsa" "$WS/deploy/id_rsa"
  ln "$FAKE_HOME/.ssh/id_ed25519" "$WS/key"
}

attempt() {
  capture sandbox -- /bin/bash -c "$READ_EACH
$TRY_PRELUDE
try_write deploy/id_rsa
try_write key" bash deploy/id_rsa key
  expect_rc 0
  refute "$CREDENTIAL_MARKER" "$FAKE_KEY_MARKER"
  expect_lines "READ deploy/id_rsa: " "READ key: "
  expect_refused "write deploy/id_rsa" "Read-only file system" "Permission denied"
  expect_refused "write key" "Read-only file system" "Permission denied"
  expect_err "warning: $WS/deploy/id_rsa is the credential $FAKE_HOME/.ssh/id_rsa under another name"
  expect_err "warning: $WS/key is the credential $FAKE_HOME/.ssh/id_ed25519 under another name"
}

run_attempt "$@"
