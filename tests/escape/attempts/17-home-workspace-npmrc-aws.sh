#!/usr/bin/env bash
# attempt: workspace = the home: create `~/.npmrc` and `~/.aws/config` (a `credential_process` runs code)
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.npmrc" \
    "$FAKE_HOME/.aws/config"
}

run_attempt "$@"
