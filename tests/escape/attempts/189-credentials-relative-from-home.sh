#!/usr/bin/env bash
# attempt: the workspace is the home: read the credentials by relative paths from the home, and overwrite or remove a key
# layer: mount plan: the masks are mount points, read-only, over the read-only home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() { plant_credentials; }

attempt() {
  capture sandbox_home -- /bin/bash -c "$READ_EACH
$TRY_PRELUDE
try_write .ssh/id_rsa
try rm -f .aws/credentials" bash "${CREDENTIAL_FILES[@]}"
  expect_rc 0
  expect_credentials_hidden ""
  expect_refused "write .ssh/id_rsa" "Read-only file system"
  expect_refused "rm -f .aws/credentials" "Read-only file system"
}

run_attempt "$@"
