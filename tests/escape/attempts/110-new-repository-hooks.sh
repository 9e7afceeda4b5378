#!/usr/bin/env bash
# attempt: `git init n` (and `a/b/n`) inside, then a `post-checkout` hook and a `core.fsmonitor` in the new repository, for the user's next git command there on the host
# layer: the guard: after the command, non-sample hooks of repositories the command created are quarantined and their configuration cleaned
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
for r in n a/b/n; do
  try git init -q \$r
  printf '#!/bin/sh\ntouch $HOST_DIR/pwned-hook-$TAG\n' > \$r/.git/hooks/post-checkout
  printf '#!/bin/sh\ntouch $HOST_DIR/pwned-hook-$TAG\n' > \$r/.git/hooks/pre-commit
  chmod +x \$r/.git/hooks/post-checkout \$r/.git/hooks/pre-commit 2>/dev/null
  try git -C \$r config core.fsmonitor 'touch $HOST_DIR/pwned-fsm-$TAG'
  echo x > \$r/f
done"
  expect_rc 0
  expect_done "git init -q n"
  expect_done "git -C n config core.fsmonitor touch $HOST_DIR/pwned-fsm-$TAG"
  local r
  for r in n a/b/n; do
    expect_quarantined "$WS/$r/.git/hooks/post-checkout" "$WS/$r/.git/hooks/pre-commit"
    expect_err "pi-sandbox: cleaned $WS/$r/.git/config in a repository the command created: it set core.fsmonitor"
    grep -qi fsmonitor "$WS/$r/.git/config" && escaped "$r/.git/config still has an fsmonitor"
    (cd "$WS/$r" && HOME="$FAKE_HOME" git status >/dev/null 2>&1 &&
      HOME="$FAKE_HOME" git add f && HOME="$FAKE_HOME" git commit -qm x >/dev/null 2>&1 &&
      HOME="$FAKE_HOME" git checkout -q -b other >/dev/null 2>&1)
  done
  host_absent "$HOST_DIR/pwned-hook-$TAG" "$HOST_DIR/pwned-fsm-$TAG"
  ls "$WS/n/.git/hooks/"*.sample >/dev/null 2>&1 || escaped "the sample hooks went too"
}

run_attempt "$@"
