#!/usr/bin/env bash
# attempt: a git directory `.y` with a `pre-commit` hook (no dangerous key at all), and `p/.git` made by renaming a prepared file (`gitdir: ../.y`), for the user's next `git commit` in `p` on the host
# layer: the guard: the hooks of the repository a `.git` file designates are quarantined (git's samples aside)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
mkdir p && echo x > p/f
try git init -q --bare .y
try git config -f .y/config core.bare false
printf '#!/bin/sh\ntouch $HOST_DIR/pwned-$TAG\n' > .y/hooks/pre-commit
chmod +x .y/hooks/pre-commit
printf 'gitdir: ../.y\n' > t && try mv t p/.git"
  expect_rc 0
  expect_done "mv t p/.git"
  (cd "$WS/p" && HOME="$FAKE_HOME" git add f && HOME="$FAKE_HOME" git commit -qm x >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_quarantined "$WS/.y/hooks/pre-commit"
}

run_attempt "$@"
