#!/usr/bin/env bash
# attempt: the workspace is a subdirectory of a repository (`repo/packages/app`): write the enclosing repository's hooks, config and info/, rename its hooks away, or change its files outside the workspace
# layer: mount plan: the repository's working tree read-only, its git directory writable but for `hooks/`, `config`, `info/` (read-only binds)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/packages/app"
  echo app >"$WS/packages/app/app.txt"
  (cd "$WS" && HOME="$FAKE_HOME" git add -A && HOME="$FAKE_HOME" git commit -qm app) >/dev/null
}

attempt() {
  local git="$WS/.git"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS/packages/app" -c "$TRY_PRELUDE
try_write $git/hooks/pre-commit '#!/bin/sh\necho pwned\n'
try mv $git/hooks $git/hooks-old
try_write $git/config '[core]\n\tfsmonitor = /tmp/x\n'
try_write $git/info/attributes '* filter=pwn\n'
try_write $WS/README.md
try_write $WS/.gitattributes
try git commit -q --allow-empty -m inside"
  expect_rc 0
  expect_refused "write $git/hooks/pre-commit"
  expect_refused "mv $git/hooks $git/hooks-old" "Device or resource busy" "Read-only file system"
  expect_refused "write $git/config"
  expect_refused "write $git/info/attributes"
  expect_refused "write $WS/README.md"
  expect_refused "write $WS/.gitattributes"
  expect_done "git commit -q --allow-empty -m inside"
  host_absent "$git/hooks/pre-commit" "$WS/.gitattributes" "$git/info/attributes"
}

run_attempt "$@"
