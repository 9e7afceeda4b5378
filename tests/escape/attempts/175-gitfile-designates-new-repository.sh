#!/usr/bin/env bash
# attempt: in a directory of the workspace that is not a repository, write `.git` as a file (`gitdir: .x`) naming a git directory made beside it whose config sets `core.fsmonitor`, for the user's next `git status` there on the host
# layer: the guard: git's discovery rules applied to every entry the command made; the repository a `.git` file designates has its configuration cleaned
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
mkdir p && cd p && echo x > f
try git init -q --bare .x
try git config -f .x/config core.bare false
try git config -f .x/config core.fsmonitor 'touch $HOST_DIR/pwned-$TAG; false'
try_write .git 'gitdir: .x\n'"
  expect_rc 0
  expect_done "write .git"
  (cd "$WS/p" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_err "pi-sandbox: cleaned $WS/p/.x/config in a repository the command created: it set core.fsmonitor"
}

run_attempt "$@"
