#!/usr/bin/env bash
# attempt: the pi-sandbox binary copied into the workspace (`~/ws/tools/pi-sandbox`) is replaced from inside, so that the next run executes the replacement on the host
# layer: mount plan: the running binary is a protected path, bound read-only after the workspace
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/tools"
  cp "$PI_BIN" "$WS/tools/pi-sandbox"
}

attempt() {
  cd "$WS" || exit 2
  # The issue's input, one step at a time so that each refusal is seen.
  capture env HOME="$FAKE_HOME" ./tools/pi-sandbox run --no-prompt -c "$TRY_PRELUDE"'
try rm -f tools/pi-sandbox
try_write tools/pi-sandbox "#!/bin/sh\necho REPLACED >&2\n"
try chmod 755 tools/pi-sandbox'
  expect_rc 0
  expect_refused "rm -f tools/pi-sandbox" "Read-only file system" "Operation not permitted" \
    "Device or resource busy"
  expect_refused "write tools/pi-sandbox" "Read-only file system" "Operation not permitted" \
    "Text file busy" "Permission denied"
  # The next run must be the real pi-sandbox.
  capture env HOME="$FAKE_HOME" ./tools/pi-sandbox run --no-prompt -c 'echo inside'
  refute REPLACED pwned
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
