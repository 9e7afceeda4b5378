#!/usr/bin/env bash
# attempt: workspace = the home: create the trusted configuration (`~/.pi/agent/extensions/pi-sandbox/config.json`, `~/.pi/agent/pi-sandbox.json`) to turn the sandbox off for later runs
# layer: mount plan: the trusted configuration is protected in every sandbox (placeholder when missing)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.pi/agent/extensions/pi-sandbox/config.json" \
    "$FAKE_HOME/.pi/agent/pi-sandbox.json"
}

run_attempt "$@"
