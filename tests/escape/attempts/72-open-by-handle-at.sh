#!/usr/bin/env bash
# attempt: `open_by_handle_at` with the file handle of the hidden `~/.ssh/id_ed25519` (computed on the host), which bypasses every path-based wall
# layer: capabilities: needs CAP_DAC_READ_SEARCH in the initial user namespace, which the sandbox never has
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local handle
  handle="$("$PY" -c "$(pysrc sc)" "name-handle:$FAKE_HOME/.ssh/id_ed25519" | sed -n 's/^name-handle:[^ ]*: OK //p')"
  [ -n "$handle" ] || skip "this file system gives no file handles"
  inside_sc "open-handle:$handle" "name-handle:$WS/README.md"
  expect_rc 0
  refute "$FAKE_KEY_MARKER"
  expect_sc "open-handle:$handle" "EPERM (Operation not permitted)"
}

run_attempt "$@"
