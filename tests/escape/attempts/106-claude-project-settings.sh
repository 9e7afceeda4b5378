#!/usr/bin/env bash
# attempt: create Claude Code's project settings (`.claude/settings.json`, `.claude/settings.local.json`) in a workspace without `.claude/`: their hooks run on the host when Claude Code starts there; with the guard (the default) and with `filesystem.protection: "strict"`
# layer: the guard: both are guarded names at the workspace root, moved to the quarantine when made (strict: placeholders inside the `.claude` scaffold)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local script="
try_write .claude/settings.json '{\"hooks\":{}}'
try_write .claude/settings.local.json '{\"hooks\":{}}'
try mkdir -p .claude/worktrees"
  # The guard: the writes may succeed inside; both files are in the quarantine afterwards,
  # and the rest of `.claude` is ordinary.
  inside_try "mkdir -p .claude$script"
  expect_rc 0
  expect_done "mkdir -p .claude/worktrees"
  expect_quarantined "$WS/.claude/settings.json" "$WS/.claude/settings.local.json"
  [ -d "$WS/.claude/worktrees" ] || escaped ".claude/worktrees was not kept"
  rmdir "$WS/.claude/worktrees" "$WS/.claude"
  # Strict: the names are placeholders (directories) inside the `.claude` scaffold.
  inside_try "$script" sandbox_strict
  expect_rc 0
  expect_refused "write .claude/settings.json" "Is a directory" "${REFUSED[@]}"
  expect_refused "write .claude/settings.local.json" "Is a directory" "${REFUSED[@]}"
  expect_done "mkdir -p .claude/worktrees"
  refute "to the quarantine"
  host_absent "$WS/.claude/settings.json" "$WS/.claude/settings.local.json"
  rmdir "$WS/.claude/worktrees" "$WS/.claude"
}

run_attempt "$@"
