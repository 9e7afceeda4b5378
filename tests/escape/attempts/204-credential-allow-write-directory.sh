#!/usr/bin/env bash
# attempt: `filesystem.additionalAllowWrite` lists ~/.config/gh, which holds the GitHub CLI's token: read and rewrite hosts.yml from a project workspace
# layer: mount plan: a credential inside a writable root is masked as in the workspace
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  printf '{"filesystem": {"additionalAllowWrite": ["%s"]}}\n' "$FAKE_HOME/.config/gh" \
    >"$HOST_DIR/write-gh.json"
}

attempt() {
  local f="$FAKE_HOME/.config/gh/hosts.yml"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/write-gh.json" --no-prompt \
    --cwd "$WS" -- /bin/bash -c "$READ_EACH
$TRY_PRELUDE
try_write $f" bash "$f"
  expect_rc 0
  refute "$CREDENTIAL_MARKER"
  expect_lines "READ $f: "
  expect_refused "write $f" "Read-only file system" "Permission denied"
}

run_attempt "$@"
