#!/usr/bin/env bash
# attempt: workspace = the home: create `~/.pi/agent/AGENTS.md`, `auth.json` and `models.json`, read by the agent at start
# layer: mount plan: startup names of the home protected whether they exist or not when the workspace is the home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.pi/agent/AGENTS.md" \
    "$FAKE_HOME/.pi/agent/auth.json" \
    "$FAKE_HOME/.pi/agent/models.json"
}

run_attempt "$@"
