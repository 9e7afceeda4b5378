#!/usr/bin/env bash
# attempt: workspace = the home: create `~/.bash_logout` and `~/.inputrc`, read by the next shell
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.bash_logout" \
    "$FAKE_HOME/.inputrc"
}

run_attempt "$@"
