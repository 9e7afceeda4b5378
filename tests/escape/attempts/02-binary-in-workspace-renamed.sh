#!/usr/bin/env bash
# attempt: the pi-sandbox binary in the workspace is moved aside, its directory renamed, or a symlink or hard link put in its place
# layer: mount plan: the running binary and every directory above it in the workspace are bound onto themselves
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/tools"
  cp "$PI_BIN" "$WS/tools/pi-sandbox"
}

attempt() {
  cd "$WS" || exit 2
  capture env HOME="$FAKE_HOME" ./tools/pi-sandbox run --no-prompt -c "$TRY_PRELUDE"'
try mv tools/pi-sandbox tools/old
try mv tools tools-old
try ln -sf /bin/false tools/pi-sandbox
try ln README.md tools/pi-sandbox.new
try mv -f tools/pi-sandbox.new tools/pi-sandbox
try truncate -s 0 tools/pi-sandbox'
  expect_rc 0
  expect_refused "mv tools/pi-sandbox tools/old" "Device or resource busy" "Read-only file system" \
    "Operation not permitted"
  expect_refused "mv tools tools-old" "Device or resource busy" "Read-only file system" \
    "Operation not permitted"
  expect_refused "ln -sf /bin/false tools/pi-sandbox" "Device or resource busy" \
    "Read-only file system" "Operation not permitted"
  expect_refused "truncate -s 0 tools/pi-sandbox" "Read-only file system" "Text file busy" \
    "Operation not permitted" "Permission denied"
  capture env HOME="$FAKE_HOME" ./tools/pi-sandbox run --no-prompt -c 'echo inside'
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
