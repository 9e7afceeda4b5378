#!/usr/bin/env bash
# attempt: with the quarantine's file system full (another one than the workspace's), make `.vscode/tasks.json`: the quarantine's copy gets ENOSPC; the command goes on
# layer: the guard fails closed: the item is renamed in place (`.vscode.pi-sandbox-defused-<hex>`, no new space) and the command is stopped (exit 125)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/small_fs.sh
source "$(dirname "$0")/../helpers/small_fs.sh"

setup() {
  mkdir -p "$FAKE_HOME/.local/state"
  chmod 700 "$FAKE_HOME/.local" "$FAKE_HOME/.local/state"
}

# shellcheck disable=SC2317 # run through private_mounts
full_quarantine() {
  small_tmpfs "$FAKE_HOME/.local/state" 1m
  dd if=/dev/zero of="$FAKE_HOME/.local/state/fill" bs=4k 2>/dev/null
  capture sandbox -- /bin/sh -c 'mkdir d && echo "{\"tasks\": []}" >d/tasks.json && mv d .vscode
    sleep 2
    echo carried on'
  host_absent "$WS/.vscode"
  expect_rc 125
  refute "carried on"
  local defused
  defused="$(cd "$WS" && ls -d .vscode.pi-sandbox-defused-* 2>/dev/null)"
  [[ "$defused" =~ ^\.vscode\.pi-sandbox-defused-[0-9a-f]{8}$ ]] || { show; escaped "no defused .vscode in $WS: '$defused'"; }
  [ "$(cat "$WS/$defused/tasks.json")" = '{"tasks": []}' ] || escaped "the defused item lost its content"
  expect_err "pi-sandbox: renamed $WS/.vscode to $WS/$defused (a guarded name: dangerous-file); the quarantine failed: write(\"tasks.json\"): ENOSPC (No space left on device)"
  expect_err "pi-sandbox: the guard could not check or undo what the command made, so the command was stopped: could not quarantine $WS/.vscode (write(\"tasks.json\"): ENOSPC (No space left on device))"
}

attempt() {
  private_mounts full_quarantine
}

in_private "$@"
run_attempt "$@"
