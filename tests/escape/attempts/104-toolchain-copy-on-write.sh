#!/usr/bin/env bash
# attempt: replace a toolchain's programs in the home (`~/.cargo/bin/cargo`, `~/.local/bin/tool`: $PATH entries re-exposed in the hidden home), so that the host runs them later; read cargo's registry token next to them
# layer: mount plan: toolchain roots are overlays with a throw-away upper layer; cargo's credentials are concealed
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '[registry]\ntoken = "cio-token-%s"\n' "$TAG" >"$FAKE_HOME/.cargo/credentials.toml"
}

attempt() {
  capture env HOME="$FAKE_HOME" PATH="$FAKE_HOME/.cargo/bin:$FAKE_HOME/.local/bin:/usr/bin:/bin" \
    "$PI_BIN" run --no-prompt --cwd "$WS" -c "$TRY_PRELUDE
cargo; tool
try_write $FAKE_HOME/.cargo/bin/cargo '#!/bin/sh\necho pwned\n'
try_write $FAKE_HOME/.local/bin/tool '#!/bin/sh\necho pwned\n'
try_write $FAKE_HOME/.cargo/config.toml '[alias]\nb = \"!sh -c pwned\"\n'
try rm -rf $FAKE_HOME/.cargo/bin
cat $FAKE_HOME/.cargo/credentials.toml
try_write $FAKE_HOME/.cargo/credentials.toml"
  expect_rc 0
  expect_out "fake cargo"
  expect_out "fake tool"
  refute "cio-token-$TAG"
  # Inside, the overlays take the writes; the runner's snapshot of the fake home shows that
  # none reached the host.
  expect_done "write $FAKE_HOME/.cargo/bin/cargo"
  expect_done "write $FAKE_HOME/.local/bin/tool"
  expect_refused "write $FAKE_HOME/.cargo/credentials.toml"
  host_absent "$FAKE_HOME/.cargo/config.toml"
}

run_attempt "$@"
