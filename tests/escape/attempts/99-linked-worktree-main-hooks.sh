#!/usr/bin/env bash
# attempt: the workspace is a linked worktree (`git worktree add ../wt`) of a repository in the home: write the main repository's hooks and configuration, which its `.git` file points at
# layer: mount plan: the main repository stays hidden with the home, or is exposed with its `hooks/` and `config` protected; the guard quarantines a new `config.worktree`
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  (cd "$WS" && HOME="$FAKE_HOME" git worktree add -q ../wt -b feature) >/dev/null 2>&1
}

attempt() {
  [ -f "$FAKE_HOME/wt/.git" ] || skip "git worktree add failed"
  local common="$WS/.git"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$FAKE_HOME/wt" -c "$TRY_PRELUDE
try_write $common/hooks/pre-commit '#!/bin/sh\necho pwned\n'
try mv $common/hooks $common/hooks-old
try_write $common/config '[core]\n\thooksPath = /tmp\n'
try_write $common/worktrees/wt/config.worktree '[core]\n\thooksPath = /tmp\n'"
  expect_rc 0
  expect_refused "write $common/hooks/pre-commit" "Read-only file system" "No such file or directory"
  expect_refused "mv $common/hooks $common/hooks-old" "Device or resource busy" \
    "Read-only file system" "No such file or directory"
  expect_refused "write $common/config" "Read-only file system" "No such file or directory"
  # Hooks and config of the main repository are compared by the runner's snapshot. The
  # worktree's missing config.worktree is a guarded name: moved to the quarantine.
  host_absent "$common/worktrees/wt/config.worktree"
  if grep -qxF "DONE: write $common/worktrees/wt/config.worktree" <<<"$OUT"; then
    expect_quarantined "$common/worktrees/wt/config.worktree"
  fi
}

run_attempt "$@"
