#!/usr/bin/env bash
# attempt: a hard link to ~/.aws/credentials in a directory of the hidden home that `filesystem.additionalAllowRead` re-exposes: read it from a project workspace
# layer: scan at start: the re-exposed directories are searched for a credential's inode, which is masked
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  mkdir -p "$FAKE_HOME/notes/aws"
  ln "$FAKE_HOME/.aws/credentials" "$FAKE_HOME/notes/aws/creds"
  printf '{"filesystem": {"additionalAllowRead": ["%s"]}}\n' "$FAKE_HOME/notes" \
    >"$HOST_DIR/read-notes.json"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/read-notes.json" --no-prompt \
    --cwd "$WS" -- /bin/bash -c "$READ_EACH" bash "$FAKE_HOME/notes/aws/creds"
  expect_rc 0
  refute "$CREDENTIAL_MARKER"
  expect_lines "READ $FAKE_HOME/notes/aws/creds: "
  expect_err "warning: $FAKE_HOME/notes/aws/creds is the credential $FAKE_HOME/.aws/credentials under another name"
}

run_attempt "$@"
