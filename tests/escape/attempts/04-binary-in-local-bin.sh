#!/usr/bin/env bash
# attempt: pi-sandbox installed in `~/.local/bin`, the workspace inside the home: the binary is removed and rewritten from inside
# layer: mount plan: hidden home (private layer) and the binary re-exposed read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  cp "$PI_BIN" "$FAKE_HOME/.local/bin/pi-sandbox"
}

attempt() {
  local bin="$FAKE_HOME/.local/bin/pi-sandbox"
  capture env HOME="$FAKE_HOME" "$bin" run --no-prompt --cwd "$WS" -c "$TRY_PRELUDE"'
try rm -f ~/.local/bin/pi-sandbox
try_write ~/.local/bin/pi-sandbox
try mv ~/.local/bin ~/.local/bin2'
  expect_rc 0
  expect_refused "rm -f $bin" "Device or resource busy" "Read-only file system" \
    "Operation not permitted"
  expect_refused "write $bin" "Read-only file system" "Text file busy" "Operation not permitted"
  capture env HOME="$FAKE_HOME" "$bin" run --no-prompt --cwd "$WS" -c 'echo inside'
  refute pwned REPLACED
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
