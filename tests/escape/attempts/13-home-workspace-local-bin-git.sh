#!/usr/bin/env bash
# attempt: workspace = the home: create `~/.local/bin/git`, which shadows git on PATH
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.local/bin/git"
}

run_attempt "$@"
