#!/usr/bin/env bash
# attempt: the workspace is a repository's root with a linked worktree (`../wt`): plant `.git/commondir` and rewrite `.git/worktrees/wt/commondir` to point host git (in the repository and in the worktree) at a copy of the git directory whose config sets `core.fsmonitor`
# layer: policy: the workspace repository's missing `commondir` is a guarded name (quarantined at once), a linked worktree's existing `commondir` is bound read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  (cd "$WS" && HOME="$FAKE_HOME" git worktree add -q ../wt -b feature) >/dev/null 2>&1
}

attempt() {
  [ -f "$WS/.git/worktrees/wt/commondir" ] || skip "git worktree add failed"
  capture sandbox -c "$TRY_PRELUDE
cp -a .git evil && rm -rf evil/hooks evil/worktrees &&
  git config -f evil/config core.fsmonitor 'echo PWNED >&2; false'
try_write .git/worktrees/wt/commondir '../../../evil\n'
try_write .git/commondir '../evil\n'"
  expect_rc 0
  expect_refused "write .git/worktrees/wt/commondir" "Read-only file system" \
    "Operation not permitted" "Device or resource busy"
  if grep -qxF "DONE: write .git/commondir" <<<"$OUT"; then expect_quarantined "$WS/.git/commondir"; fi
  host_absent "$WS/.git/commondir"
}

run_attempt "$@"
