#!/usr/bin/env bash
# attempt: `pi-sandbox serve` runs from `~/ws/vendor/pi-sandbox` while an upgrade moves the running binary aside (`mv pi-sandbox pi-sandbox.old`) and puts the new one in its place, so that /proc/self/exe names the old file; the next command of that serve overwrites the new binary, which the host runs next
# layer: serve: its workers protect the binary at the path serve started from as well as the running one (`--binary-at-start`); the mount plan binds both read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/vendor"
  cp "$PI_BIN" "$WS/vendor/pi-sandbox"
}

attempt() {
  cd "$WS" || exit 2
  # The driver starts serve, replaces its binary on the host, then asks serve to run the write.
  capture env HOME="$FAKE_HOME" "$PY" -c "$(pysrc serve_exec)" "$WS/vendor/pi-sandbox" "$WS" null \
    "printf '#!/bin/sh\\necho REPLACED\\n' > vendor/pi-sandbox && echo DONE || echo REFUSED" move-aside
  refute "output: DONE"
  capture env HOME="$FAKE_HOME" ./vendor/pi-sandbox run --no-prompt -c 'echo inside'
  refute REPLACED
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
