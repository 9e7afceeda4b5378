#!/usr/bin/env bash
# attempt: workspace = the home: create `~/.config/systemd/user/x.service`, a user unit
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.config/systemd/user/x.service"
}

run_attempt "$@"
