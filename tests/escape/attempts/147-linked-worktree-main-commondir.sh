#!/usr/bin/env bash
# attempt: the workspace is a linked worktree (`../wt`) of a repository in the home: plant `commondir` in the main repository's git directory, pointing its host git at a copy whose config sets `core.fsmonitor`
# layer: policy: the common directory of a linked worktree may not get a `commondir` (a guarded name: quarantined at once)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  (cd "$WS" && HOME="$FAKE_HOME" git worktree add -q ../wt -b feature) >/dev/null 2>&1
}

attempt() {
  [ -f "$FAKE_HOME/wt/.git" ] || skip "git worktree add failed"
  local common="$WS/.git"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$FAKE_HOME/wt" -c "$TRY_PRELUDE
try_write $common/commondir '$FAKE_HOME/wt/.evil\n'"
  expect_rc 0
  if grep -qxF "DONE: write $common/commondir" <<<"$OUT"; then expect_quarantined "$common/commondir"; fi
  host_absent "$common/commondir"
}

run_attempt "$@"
