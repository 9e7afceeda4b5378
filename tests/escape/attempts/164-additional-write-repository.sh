#!/usr/bin/env bash
# attempt: `filesystem.additionalAllowWrite` names a directory holding a repository (a user letting the agent work across `src/`): write its `.git/hooks/pre-commit`, set `core.fsmonitor` in its `.git/config`, create `.vscode/tasks.json` at the entry's root, for a host `git commit`, `git status` or editor there to run
# layer: policy and guard: every writable root is protected like the workspace (its scan, hooks read-only, configurations guarded by content, the names host programs run guarded at its root)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$HOST_DIR/src"
  git init -q "$HOST_DIR/src/repo"
  printf '{"filesystem": {"additionalAllowWrite": ["%s"]}}\n' "$HOST_DIR/src" >"$HOST_DIR/write-config.json"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/write-config.json" --no-prompt \
    --cwd "$WS" -c "$TRY_PRELUDE
cd $HOST_DIR/src
try_write repo/.git/hooks/pre-commit '#!/bin/sh\ntouch $HOST_DIR/pwned-$TAG\n'
chmod +x repo/.git/hooks/pre-commit 2>/dev/null
try git -C repo config core.fsmonitor 'touch $HOST_DIR/pwned2-$TAG; false'
sleep 0.3
try git -C repo config user.name kept
mkdir -p .vscode
try_write .vscode/tasks.json 'touch $HOST_DIR/pwned3-$TAG\n'
try_write ordinary.txt 'kept\n'"
  expect_rc 0
  expect_refused "write repo/.git/hooks/pre-commit" "Read-only file system"
  expect_done "write ordinary.txt"
  expect_undone "$HOST_DIR/src/repo/.git/config" core.fsmonitor
  expect_quarantined "$HOST_DIR/src/.vscode"
  (cd "$HOST_DIR/src/repo" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-$TAG" "$HOST_DIR/pwned2-$TAG" "$HOST_DIR/pwned3-$TAG" \
    "$HOST_DIR/src/repo/.git/hooks/pre-commit"
  [ "$(HOME="$FAKE_HOME" git -C "$HOST_DIR/src/repo" config user.name)" = kept ] ||
    escaped "an ordinary git config change did not reach the host"
}

run_attempt "$@"
