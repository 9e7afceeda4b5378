#!/usr/bin/env bash
# attempt: build a repository with `core.fsmonitor` in the sandbox's private /tmp, where the guard does not look, then move the whole tree into the workspace 9 levels down, its `.git` already inside
# layer: the guard: a directory moved in is watched and walked at once; every entry in it counts as made by the command
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

D=vendor/a/b/c/d/e/f/g

attempt() {
  inside_try "
mkdir -p /tmp/stage/r $D && cd /tmp/stage/r && echo x > f
try git init -q
try git config core.fsmonitor 'touch $HOST_DIR/pwned-$TAG; false'
cd - >/dev/null && try mv /tmp/stage/r $D/r"
  expect_rc 0
  expect_done "mv /tmp/stage/r $D/r"
  (cd "$WS/$D/r" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_err "pi-sandbox: cleaned $WS/$D/r/.git/config in a repository the command created: it set core.fsmonitor"
}

run_attempt "$@"
