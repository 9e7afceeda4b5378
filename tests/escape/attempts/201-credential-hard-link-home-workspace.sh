#!/usr/bin/env bash
# attempt: the workspace is the home and ~/projects/key is a hard link to ~/.ssh/id_rsa: read and rewrite the key through it
# layer: scan at start: a file that is a credential's inode is masked by an empty read-only file, and pointed out
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  mkdir -p "$FAKE_HOME/projects"
  ln "$FAKE_HOME/.ssh/id_rsa" "$FAKE_HOME/projects/key"
}

attempt() {
  capture sandbox_home -- /bin/bash -c "$READ_EACH
$TRY_PRELUDE
try_write projects/key" bash projects/key .ssh/id_rsa
  expect_rc 0
  refute "$CREDENTIAL_MARKER"
  expect_lines "READ projects/key: " "READ .ssh/id_rsa: "
  expect_refused "write projects/key" "Read-only file system" "Permission denied"
  expect_err "warning: $FAKE_HOME/projects/key is the credential $FAKE_HOME/.ssh/id_rsa under another name"
}

run_attempt "$@"
