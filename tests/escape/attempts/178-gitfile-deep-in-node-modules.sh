#!/usr/bin/env bash
# attempt: a `.git` file 12 levels down inside `node_modules/` (below the workspace scan's depth, in a directory it skips) naming a git directory with `core.fsmonitor`, for a host `git status` there
# layer: the guard: every directory made during the command is watched as it appears, without a depth bound
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

D=node_modules/a/b/c/d/e/f/g/h/i/j/k

attempt() {
  inside_try "
mkdir -p $D && cd $D && echo x > f
try git init -q --bare ../.x
try git config -f ../.x/config core.bare false
try git config -f ../.x/config core.fsmonitor 'touch $HOST_DIR/pwned-$TAG; false'
try_write .git 'gitdir: ../.x\n'"
  expect_rc 0
  expect_done "write .git"
  (cd "$WS/$D" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_err "pi-sandbox: cleaned $WS/${D%/k}/.x/config in a repository the command created: it set core.fsmonitor"
}

run_attempt "$@"
