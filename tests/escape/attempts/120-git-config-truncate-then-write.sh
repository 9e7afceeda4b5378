#!/usr/bin/env bash
# attempt: rewrite `.git/config` the way `mv` across mounts and `cat >` do (the file emptied first, then written with a `core.fsmonitor` added), hoping the guard takes the empty file as the content to restore and wipes the user's configuration, or lets the key through (found by the battery's author)
# layer: the guard: a dangerous change is compared with the content at the start and undone by removing what it added, never by restoring an intermediate empty file
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  HOME="$FAKE_HOME" git -C "$WS" config core.editor true
  HOME="$FAKE_HOME" git -C "$WS" config alias.co checkout
}

attempt() {
  local p="$HOST_DIR/pwned-$TAG"
  # From the workspace root into `.git` crosses a mount: mv truncates and rewrites in place.
  capture sandbox -c "cp .git/config c.tmp && printf '[core]fsmonitor=touch $p-1\n' >> c.tmp && mv c.tmp .git/config"
  expect_rc 0
  expect_undone "$WS/.git/config" core.fsmonitor
  capture sandbox -c "{ cat .git/config; printf '[core]\n\tfsmonitor = touch $p-2\n'; } > c.tmp && cat c.tmp > .git/config && rm c.tmp"
  expect_rc 0
  expect_undone "$WS/.git/config" core.fsmonitor
  [ "$(HOME="$FAKE_HOME" git -C "$WS" config core.editor)" = true ] || escaped "core.editor is gone"
  [ "$(HOME="$FAKE_HOME" git -C "$WS" config alias.co)" = checkout ] || escaped "alias.co is gone"
  grep -qi fsmonitor "$WS/.git/config" && escaped ".git/config still has an fsmonitor"
  cp -a "$WS" "$HOST_DIR/ws-copy"
  HOME="$FAKE_HOME" git -C "$HOST_DIR/ws-copy" status >/dev/null 2>&1
  host_absent "$p-1" "$p-2"
}

run_attempt "$@"
