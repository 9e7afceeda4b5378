#!/usr/bin/env bash
# attempt: the workspace is a repository's root with a submodule (`libs/sub`, its git directory in `.git/modules/libs/sub`): set `core.fsmonitor` in the submodule's config (host `git status` recurses into it and runs it), plant a hook in its hooks directory and a `commondir` in its git directory
# layer: policy: a submodule's hooks and a missing commondir are protected (refused or quarantined); the guard checks the submodule's config by content and undoes a dangerous key
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$HOST_DIR/subrepo"
  (cd "$HOST_DIR/subrepo" && HOME="$FAKE_HOME" git init -q && echo sub >f &&
    HOME="$FAKE_HOME" git add f && HOME="$FAKE_HOME" git commit -qm sub) >/dev/null 2>&1
  (cd "$WS" && HOME="$FAKE_HOME" git -c protocol.file.allow=always submodule -q add \
    "$HOST_DIR/subrepo" libs/sub && HOME="$FAKE_HOME" git commit -qm submodule) >/dev/null 2>&1
}

attempt() {
  local module="$WS/.git/modules/libs/sub"
  [ -f "$module/HEAD" ] || skip "git submodule add failed"
  capture sandbox -c "$TRY_PRELUDE
try git config -f .git/modules/libs/sub/config core.fsmonitor 'echo PWNED >&2; false'
try_write .git/modules/libs/sub/hooks/pre-commit '#!/bin/sh\necho pwned\n'
try_write .git/modules/libs/sub/commondir '../../../evil\n'"
  expect_rc 0
  ! grep -q fsmonitor "$module/config" || { show; escaped "the submodule's config keeps core.fsmonitor"; }
  if grep -qxF "DONE: git config -f .git/modules/libs/sub/config core.fsmonitor echo PWNED >&2; false" <<<"$OUT"; then
    expect_undone "$module/config" core.fsmonitor
  fi
  expect_refused "write .git/modules/libs/sub/hooks/pre-commit" "Read-only file system" \
    "Operation not permitted" "Permission denied"
  host_absent "$module/hooks/pre-commit"
  if grep -qxF "DONE: write .git/modules/libs/sub/commondir" <<<"$OUT"; then
    expect_quarantined "$module/commondir"
  fi
  host_absent "$module/commondir"
}

run_attempt "$@"
