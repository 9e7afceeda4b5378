#!/usr/bin/env bash
# attempt: create Claude Code's project settings (`.claude/settings.json`, `.claude/settings.local.json`) in a workspace without `.claude/`: their hooks run on the host when Claude Code starts there
# layer: mount plan: both are protected names at the workspace root (placeholders inside the `.claude` scaffold)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
try_write .claude/settings.json '{\"hooks\":{}}'
try_write .claude/settings.local.json '{\"hooks\":{}}'
try mkdir -p .claude/worktrees"
  expect_rc 0
  expect_refused "write .claude/settings.json" "Is a directory" "${REFUSED[@]}"
  expect_refused "write .claude/settings.local.json" "Is a directory" "${REFUSED[@]}"
  expect_done "mkdir -p .claude/worktrees"
  host_absent "$WS/.claude/settings.json" "$WS/.claude/settings.local.json"
  rmdir "$WS/.claude/worktrees" "$WS/.claude"
}

run_attempt "$@"
