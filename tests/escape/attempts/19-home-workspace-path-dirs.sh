#!/usr/bin/env bash
# attempt: workspace = the home: create `~/bin/git` and `~/.cargo/bin/git`, directories a login or rustup puts on PATH
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/bin/git" \
    "$FAKE_HOME/.cargo/bin/git"
}

run_attempt "$@"
