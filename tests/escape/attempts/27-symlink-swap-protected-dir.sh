#!/usr/bin/env bash
# attempt: an existing protected directory (`.vscode` with settings) is moved away, removed or replaced by a symlink to the home, then written
# layer: mount plan: existing protected paths bound read-only onto themselves (EBUSY on rename)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/.vscode"
  echo '{"editor.tabSize": 2}' >"$WS/.vscode/settings.json"
}

attempt() {
  inside_try '
try mv .vscode .vscode-old
try rm -rf .vscode
try ln -sfn '"$FAKE_HOME"' .vscode
try_write .vscode/settings.json
try_write .vscode/tasks.json
try mv .vscode/settings.json .vscode/s.json'
  expect_rc 0
  expect_refused "mv .vscode .vscode-old" "Device or resource busy" "Read-only file system"
  expect_refused "rm -rf .vscode" "Device or resource busy" "Read-only file system"
  expect_refused "ln -sfn $FAKE_HOME .vscode" "Device or resource busy" "Read-only file system" \
    "File exists" "cannot overwrite directory"
  expect_refused "write .vscode/settings.json" "Read-only file system"
  expect_refused "write .vscode/tasks.json" "Read-only file system"
  expect_refused "mv .vscode/settings.json .vscode/s.json" "Read-only file system" \
    "Device or resource busy"
}

run_attempt "$@"
