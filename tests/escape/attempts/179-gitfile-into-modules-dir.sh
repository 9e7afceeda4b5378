#!/usr/bin/env bash
# attempt: a git directory made under a nested repository's `vend/.git/modules/evil` (where submodules live) with `core.fsmonitor` and a `post-checkout` hook, and `sub/.git` naming it (`gitdir: ../vend/.git/modules/evil`), for a host `git status` and `git checkout` in `sub`
# layer: the guard: a `.git` file's target is a repository like any other; its hooks are quarantined and its configuration cleaned
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
mkdir sub && echo x > sub/f
try git init -q vend
try git init -q --bare vend/.git/modules/evil
try git config -f vend/.git/modules/evil/config core.bare false
try git config -f vend/.git/modules/evil/config core.fsmonitor 'touch $HOST_DIR/pwned-fsm-$TAG; false'
printf '#!/bin/sh\ntouch $HOST_DIR/pwned-hook-$TAG\n' > vend/.git/modules/evil/hooks/post-checkout
chmod +x vend/.git/modules/evil/hooks/post-checkout
try_write sub/.git 'gitdir: ../vend/.git/modules/evil\n'"
  expect_rc 0
  expect_done "write sub/.git"
  (cd "$WS/sub" && HOME="$FAKE_HOME" git status >/dev/null 2>&1 &&
    HOME="$FAKE_HOME" git add f && HOME="$FAKE_HOME" git commit -qm x >/dev/null 2>&1 &&
    HOME="$FAKE_HOME" git checkout -q -b other >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-fsm-$TAG" "$HOST_DIR/pwned-hook-$TAG"
  expect_err "pi-sandbox: cleaned $WS/vend/.git/modules/evil/config in a repository the command created: it set core.fsmonitor"
  expect_quarantined "$WS/vend/.git/modules/evil/hooks/post-checkout"
}

run_attempt "$@"
