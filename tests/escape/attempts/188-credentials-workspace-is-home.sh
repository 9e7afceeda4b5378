#!/usr/bin/env bash
# attempt: the workspace is the home: read every credential of the table (ssh and gpg private keys, cloud tokens, ~/.npmrc, the agents' logins)
# layer: mount plan: each credential is masked by an empty read-only file or directory, after every other bind
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() { plant_credentials; }

attempt() {
  capture sandbox_home -- /bin/bash -c "$READ_EACH" bash "${CREDENTIAL_FILES[@]/#/$FAKE_HOME/}"
  expect_rc 0
  expect_credentials_hidden "$FAKE_HOME"
}

run_attempt "$@"
