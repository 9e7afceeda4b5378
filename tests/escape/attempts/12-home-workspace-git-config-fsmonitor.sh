#!/usr/bin/env bash
# attempt: workspace = the home, `~/.config/git/config` missing: create it with `core.fsmonitor`, run by the next `git status` on the host
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  rm -rf "$FAKE_HOME/.config/git"
}

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.config/git/config"
}

run_attempt "$@"
