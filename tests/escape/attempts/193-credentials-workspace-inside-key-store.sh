#!/usr/bin/env bash
# attempt: the workspace is gpg's private-key directory (~/.gnupg/private-keys-v1.d): read the keys as ordinary workspace files
# layer: session: a workspace inside a credential directory is refused before anything runs
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() { plant_credentials; }

attempt() {
  local dir="$FAKE_HOME/.gnupg/private-keys-v1.d"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$dir" -- cat ABCDEF.key
  refute "$CREDENTIAL_MARKER"
  expect_rc 125
  expect_err "refusing the workspace \"$dir\": it is or lies inside the credential directory $dir"
}

run_attempt "$@"
