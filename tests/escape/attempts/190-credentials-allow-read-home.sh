#!/usr/bin/env bash
# attempt: `filesystem.additionalAllowRead` lists the home itself: read every credential from a project workspace
# layer: mount plan: the re-exposed home keeps each credential masked
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  printf '{"filesystem": {"additionalAllowRead": ["%s"]}}\n' "$FAKE_HOME" >"$HOST_DIR/read-home.json"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/read-home.json" --no-prompt \
    --cwd "$WS" -- /bin/bash -c "$READ_EACH" bash "${CREDENTIAL_FILES[@]/#/$FAKE_HOME/}"
  expect_rc 0
  expect_credentials_hidden "$FAKE_HOME"
}

run_attempt "$@"
