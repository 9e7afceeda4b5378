#!/usr/bin/env bash
# attempt: on a workspace on another file system than the home, a 65 MiB dense file moved to `.vscode`: the quarantine copies all of it to the home's disk (and the guard waits for the copy)
# layer: the quarantine copies at most 64 MiB of data per item across file systems; past it the item is renamed in place (`.vscode.pi-sandbox-defused-<hex>`)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/small_fs.sh
source "$(dirname "$0")/../helpers/small_fs.sh"

# shellcheck disable=SC2317 # run through private_mounts
dense() {
  small_tmpfs "$WS" 96m
  fresh_repo "$WS"
  capture sandbox -- /bin/sh -c 'mkdir d && dd if=/dev/zero of=d/big bs=1M count=65 2>/dev/null && mv d .vscode'
  local used
  used="$(kib "$(quarantine_dir)")"
  [ "$used" -le 256 ] || { show; escaped "the quarantine takes $used KiB on the home's disk for one item"; }
  host_absent "$WS/.vscode"
  expect_rc 0
  local defused
  defused="$(cd "$WS" && ls -d .vscode.pi-sandbox-defused-* 2>/dev/null)"
  [[ "$defused" =~ ^\.vscode\.pi-sandbox-defused-[0-9a-f]{8}$ ]] || { show; escaped "no defused .vscode in $WS: '$defused'"; }
  [ "$(stat -c %s "$WS/$defused/big")" = 68157440 ] || escaped "the defused item lost its content"
  expect_err "pi-sandbox: renamed $WS/.vscode to $WS/$defused (a guarded name: dangerous-file); the quarantine did not take it: the quarantine takes at most 64 MiB of data per item copied across file systems"
}

attempt() {
  private_mounts dense
}

in_private "$@"
run_attempt "$@"
