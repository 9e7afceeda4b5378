#!/usr/bin/env bash
# attempt: the pi-sandbox binary in the workspace is named `pi-sandbox (deleted)`, beside a decoy `pi-sandbox`, so that a runner that strips the kernel's ` (deleted)` suffix from /proc/self/exe protects the decoy; the command then replaces the real binary, which the host runs next
# layer: session: the suffix is taken off only when the running file has no link left (st_nlink 0); the mount plan binds the real binary read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/vendor"
  cp "$PI_BIN" "$WS/vendor/pi-sandbox (deleted)"
  printf '#!/bin/sh\necho decoy\n' >"$WS/vendor/pi-sandbox"
  chmod 755 "$WS/vendor/pi-sandbox"
}

attempt() {
  cd "$WS" || exit 2
  capture env HOME="$FAKE_HOME" "./vendor/pi-sandbox (deleted)" run --no-prompt -c "$TRY_PRELUDE"'
try_write "vendor/pi-sandbox (deleted)" "#!/bin/sh\necho REPLACED\n"
printf "#!/bin/sh\necho REPLACED\n" > evil && chmod 755 evil
try mv -f evil "vendor/pi-sandbox (deleted)"'
  expect_rc 0
  expect_refused "write vendor/pi-sandbox (deleted)" "Read-only file system" \
    "Operation not permitted" "Text file busy" "Permission denied"
  expect_refused "mv -f evil vendor/pi-sandbox (deleted)" "Read-only file system" \
    "Operation not permitted" "Device or resource busy"
  capture env HOME="$FAKE_HOME" "./vendor/pi-sandbox (deleted)" run --no-prompt -c 'echo inside'
  refute REPLACED decoy
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
