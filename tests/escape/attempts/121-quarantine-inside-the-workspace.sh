#!/usr/bin/env bash
# attempt: run with the workspace containing the quarantine (`--cwd ~/.local/state`) and forge an entry whose record.json names `~/.bashrc`, so that the user's `pi-sandbox quarantine restore` writes a planted `.bashrc` (found in a fresh user's trial)
# layer: the guard: a workspace in which the command could write the quarantine is refused before anything runs
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local state="$FAKE_HOME/.local/state" id="20261201T030000Z-deadbeef"
  mkdir -p "$state"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$state" -c "
Q=pi-sandbox/quarantine/$id; mkdir -p \$Q && echo 'touch $HOST_DIR/pwned-$TAG' > \$Q/.bashrc &&
printf '{\"name\":\".bashrc\",\"original\":\"$FAKE_HOME/.bashrc\",\"time\":\"2026-12-01T03:00:00Z\",\"why\":\"x\"}\n' > \$Q/record.json"
  expect_rc 125
  expect_err "would be writable by the command (it lies in the workspace)"
  host_absent "$state/pi-sandbox/quarantine/$id"
  capture env HOME="$FAKE_HOME" "$PI_BIN" quarantine restore "$id"
  expect_rc 1
  rmdir "$state" "$FAKE_HOME/.local/state" 2>/dev/null || true
}

run_attempt "$@"
