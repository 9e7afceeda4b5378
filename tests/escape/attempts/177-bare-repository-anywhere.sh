#!/usr/bin/env bash
# attempt: a bare repository (`HEAD`, `objects/`, `refs/`) in an ordinary directory of the workspace, with `core.bare=false`, `core.worktree` and `core.fsmonitor` in its config: host git started inside it uses it
# layer: the guard: a directory that becomes a git directory during the command (git's is_git_directory) has its configuration cleaned
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
try git init -q --bare cache/d
try git config -f cache/d/config core.bare false
try git config -f cache/d/config core.worktree ..
try git config -f cache/d/config core.fsmonitor 'touch $HOST_DIR/pwned-$TAG; false'"
  expect_rc 0
  expect_done "git init -q --bare cache/d"
  (cd "$WS/cache/d" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_err "pi-sandbox: cleaned $WS/cache/d/config in a repository the command created: it set "
  grep -qi fsmonitor "$WS/cache/d/config" && escaped "cache/d/config still has an fsmonitor"
  return 0
}

run_attempt "$@"
