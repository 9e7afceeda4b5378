#!/usr/bin/env bash
# attempt: workspace = the home, `~/.ssh` missing: create `~/.ssh/authorized_keys`
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  rm -rf "$FAKE_HOME/.ssh"
}

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.ssh/authorized_keys"
}

run_attempt "$@"
