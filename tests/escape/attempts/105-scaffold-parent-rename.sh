#!/usr/bin/env bash
# attempt: with `filesystem.protection: "strict"`, `.claude` is missing, so it is made as an ordinary directory with `.claude/commands` held in it: rename `.claude` away (or replace it) and create `.claude/commands` in a new one
# layer: mount plan (strict): the scaffold is pinned (a mount point cannot be renamed: EBUSY), the protected name itself is a placeholder
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
try mv .claude .claude-old
try mkdir -p .claude-new/commands
try mv -T .claude-new .claude
try rmdir .claude/commands
try mkdir .claude/commands/x
try mkdir .claude/worktrees" sandbox_strict
  expect_rc 0
  expect_refused "mv .claude .claude-old" "Device or resource busy" "Read-only file system"
  expect_refused "mv -T .claude-new .claude" "Device or resource busy" "Directory not empty" \
    "Read-only file system"
  expect_refused "rmdir .claude/commands" "Device or resource busy" "Read-only file system"
  expect_refused "mkdir .claude/commands/x"
  expect_done "mkdir .claude/worktrees"
  refute "to the quarantine"
  host_absent "$WS/.claude/commands" "$WS/.claude-old"
  rm -rf "$WS/.claude-new"
  rmdir "$WS/.claude/worktrees" "$WS/.claude"
}

run_attempt "$@"
