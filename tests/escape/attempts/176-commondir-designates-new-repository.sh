#!/usr/bin/env bash
# attempt: in a directory of the workspace, a `.git` directory holding only `HEAD` and `commondir` (`../.x`), the common directory beside it with `core.fsmonitor` in its config, for the user's next `git status` there on the host
# layer: the guard: git's discovery rules follow `commondir`; the common directory's configuration is cleaned
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
mkdir p && cd p && echo x > f
try git init -q --bare .x
try git config -f .x/config core.bare false
try git config -f .x/config core.fsmonitor 'touch $HOST_DIR/pwned-$TAG; false'
mkdir .git
try_write .git/HEAD 'ref: refs/heads/main\n'
try_write .git/commondir '../.x\n'"
  expect_rc 0
  expect_done "write .git/commondir"
  (cd "$WS/p" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_err "pi-sandbox: cleaned $WS/p/.x/config in a repository the command created: it set core.fsmonitor"
}

run_attempt "$@"
