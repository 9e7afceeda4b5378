#!/usr/bin/env bash
# attempt: let the guard quarantine `.claude/commands`, then in a later command replace `.claude` by a symlink to a host directory; a user who restores both (the symlink first) would write `commands` outside the workspace (found in a fresh user's trial)
# layer: the quarantine: an entry records the device and inode of the directory it came from, and a restore refuses any other directory there
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  mkdir -p "$HOST_DIR/victim"
  capture sandbox -c "mkdir -p .claude/commands && echo x > .claude/commands/x.md; sleep 0.2"
  expect_quarantined "$WS/.claude/commands"
  local commands link
  commands="$(grep -oE "moved $WS/.claude/commands to the quarantine .*restore ([0-9TZ]+-[0-9a-f]+)" <<<"$ERR" | grep -oE '[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$')"
  capture sandbox -c "rm -rf .claude && ln -s $HOST_DIR/victim .claude; sleep 0.2"
  link="$(grep -oE "moved $WS/.claude to the quarantine .*" <<<"$ERR" | grep -oE '[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$')"
  [ -n "$commands" ] && [ -n "$link" ] || { show; escaped "no quarantine lines for both"; }
  capture env HOME="$FAKE_HOME" "$PI_BIN" quarantine restore "$link"
  expect_rc 0
  capture env HOME="$FAKE_HOME" "$PI_BIN" quarantine restore "$commands"
  expect_rc 1
  expect_err "is not the one it came from"
  host_absent "$HOST_DIR/victim/commands"
  rm -f "$WS/.claude"
}

run_attempt "$@"
