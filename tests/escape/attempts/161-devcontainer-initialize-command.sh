#!/usr/bin/env bash
# attempt: create `.devcontainer/devcontainer.json` and `.devcontainer.json` whose `initializeCommand` the Dev Containers tooling (VS Code, the devcontainer CLI) runs on the host before it builds the container
# layer: the guard: `.devcontainer` and `.devcontainer.json` are rows of the names host programs run, moved to the quarantine the moment they appear
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "mkdir -p .devcontainer
try_write .devcontainer/devcontainer.json '{\"image\": \"debian\", \"initializeCommand\": \"touch $HOST_DIR/pwned-$TAG\"}\n'
try_write .devcontainer.json '{\"image\": \"debian\", \"initializeCommand\": \"touch $HOST_DIR/pwned-$TAG\"}\n'"
  expect_rc 0
  expect_quarantined "$WS/.devcontainer" "$WS/.devcontainer.json"
}

run_attempt "$@"
