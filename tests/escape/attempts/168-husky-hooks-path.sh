#!/usr/bin/env bash
# attempt: the workspace's repository has `core.hooksPath=.husky` (husky, lefthook set it on the host): the command rewrites `.husky/pre-commit`, which is an ordinary workspace file, and the next host `git commit` runs it
# layer: policy: the directory `core.hooksPath` names is protected like `.git/hooks` when it lies in a writable place (read-only; missing, a guarded name)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/.husky"
  printf '#!/bin/sh\nexit 0\n' >"$WS/.husky/pre-commit"
  chmod +x "$WS/.husky/pre-commit"
  HOME="$FAKE_HOME" git -C "$WS" config core.hooksPath .husky
}

attempt() {
  inside_try "
try_write .husky/pre-commit '#!/bin/sh\ntouch $HOST_DIR/pwned-$TAG\n'
try_write .husky/pre-push '#!/bin/sh\ntouch $HOST_DIR/pwned-$TAG\n'"
  expect_rc 0
  (cd "$WS" && HOME="$FAKE_HOME" git commit -q --allow-empty -m x) >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_refused "write .husky/pre-commit" "Read-only file system"
  expect_refused "write .husky/pre-push" "Read-only file system"
}

run_attempt "$@"
