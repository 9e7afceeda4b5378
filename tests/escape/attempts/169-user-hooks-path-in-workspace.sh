#!/usr/bin/env bash
# attempt: the user's `~/.gitconfig` sets `core.hooksPath` to a directory inside the workspace (`<ws>/.githooks`, which does not exist yet): the command creates `.githooks/pre-commit`, and the next host `git commit` there runs it
# layer: policy: `core.hooksPath` is read from the user's and the system's configuration too; a missing hooks directory in a writable place is a guarded name (quarantined at once; in strict mode held by a placeholder)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  HOME="$FAKE_HOME" git config --global core.hooksPath "$WS/.githooks"
}

attempt() {
  inside_try "
mkdir -p .githooks 2>/dev/null
printf '#!/bin/sh\ntouch $HOST_DIR/pwned-$TAG\n' > .githooks/pre-commit 2>/dev/null && chmod +x .githooks/pre-commit
sleep 0.3
echo end"
  expect_rc 0
  (cd "$WS" && HOME="$FAKE_HOME" git commit -q --allow-empty -m x) >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG"
  [ ! -e "$WS/.githooks/pre-commit" ] || escaped "$WS/.githooks/pre-commit was left in the workspace"
}

run_attempt "$@"
