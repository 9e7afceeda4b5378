#!/usr/bin/env bash
# attempt: pi-sandbox installed in `~/.local/bin` and the workspace is the home itself: the binary is replaced from inside
# layer: mount plan: the running binary is a protected path even inside the workspace
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  cp "$PI_BIN" "$FAKE_HOME/.local/bin/pi-sandbox"
}

attempt() {
  local bin="$FAKE_HOME/.local/bin/pi-sandbox"
  capture env HOME="$FAKE_HOME" "$bin" run --no-prompt --cwd "$FAKE_HOME" -c "$TRY_PRELUDE"'
try rm -f .local/bin/pi-sandbox
try_write .local/bin/pi-sandbox
try mv .local/bin .local/bin2
try mv .local .local2'
  expect_rc 0
  expect_refused "rm -f .local/bin/pi-sandbox" "Device or resource busy" "Read-only file system" \
    "Operation not permitted"
  expect_refused "write .local/bin/pi-sandbox" "Read-only file system" "Text file busy" \
    "Operation not permitted"
  expect_refused "mv .local/bin .local/bin2" "Device or resource busy" "Read-only file system"
  expect_refused "mv .local .local2" "Device or resource busy" "Read-only file system"
  capture env HOME="$FAKE_HOME" "$bin" run --no-prompt --cwd "$WS" -c 'echo inside'
  refute pwned REPLACED
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
