#!/usr/bin/env bash
# attempt: workspace = the home: create `~/.config/autostart/x.desktop`, started by the next desktop session
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.config/autostart/x.desktop"
}

run_attempt "$@"
