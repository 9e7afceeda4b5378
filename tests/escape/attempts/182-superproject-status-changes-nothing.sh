#!/usr/bin/env bash
# attempt: the workspace holds a superproject with a submodule and a linked worktree set up on the host; a plain `git status`, `git submodule update` and `git worktree list` inside must leave them as they were (the guard once stripped the submodule's `core.worktree` and said the command had registered it)
# layer: the guard: it compares with the state at the start and acts only on what the command changed
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  local g=(env HOME="$FAKE_HOME" git -c protocol.file.allow=always)
  mkdir -p "$HOST_DIR/lib" "$WS/src"
  (cd "$HOST_DIR/lib" && "${g[@]}" init -q && echo l >l && "${g[@]}" add l &&
    "${g[@]}" commit -qm l) >/dev/null 2>&1
  (cd "$WS/src" && "${g[@]}" init -q && echo s >s && "${g[@]}" add s && "${g[@]}" commit -qm s &&
    "${g[@]}" submodule add -q "$HOST_DIR/lib" lib && "${g[@]}" commit -qm sub &&
    "${g[@]}" worktree add -q ../src-wt -b wt) >/dev/null 2>&1
}

attempt() {
  [ -f "$WS/src/.git/modules/lib/config" ] || skip "git submodule add failed on the host"
  local before
  before="$(cd "$WS" && find src/.git/modules src/.git/worktrees src-wt src/lib -name config -o -name .git -o -name commondir -o -name gitdir | LC_ALL=C sort | xargs sha256sum)"
  inside_try "
cd src && try git status --porcelain
try git submodule update
try git worktree list"
  expect_rc 0
  expect_done "git status --porcelain"
  refute "pi-sandbox: cleaned" "pi-sandbox: undid" "pi-sandbox: moved"
  [ "$(cd "$WS" && find src/.git/modules src/.git/worktrees src-wt src/lib -name config -o -name .git -o -name commondir -o -name gitdir | LC_ALL=C sort | xargs sha256sum)" = "$before" ] ||
    escaped "a configuration or link of the host's submodule or worktree changed"
  grep -q worktree "$WS/src/.git/modules/lib/config" || escaped "the submodule lost its core.worktree"
}

run_attempt "$@"
