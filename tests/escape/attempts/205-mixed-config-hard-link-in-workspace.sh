#!/usr/bin/env bash
# attempt: hard links to ~/.npmrc and ~/.docker/config.json left in the workspace: the home's copies are shown without their tokens, the links would be the originals with them
# layer: scan at start: tool configuration with a token is a credential under another name (masked, pointed out)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../mixed_config.sh
source "$(dirname "$0")/../mixed_config.sh"

setup() {
  plant_mixed_config
  ln "$FAKE_HOME/.npmrc" "$WS/npmrc"
  ln "$FAKE_HOME/.docker/config.json" "$WS/docker-config.json"
}

attempt() {
  capture sandbox -- /bin/bash -c 'cat npmrc docker-config.json; echo end'
  expect_rc 0
  refute "$MIXED_MARKER"
  expect_lines "end"
  expect_err "warning: $WS/npmrc is the credential $FAKE_HOME/.npmrc under another name"
  expect_err "warning: $WS/docker-config.json is the credential $FAKE_HOME/.docker/config.json under another name"
}

run_attempt "$@"
