#!/usr/bin/env bash
# attempt: ~/.cargo/bin is on $PATH, so the cargo home is re-exposed in the hidden home: read the registry token of ~/.cargo/config.toml next to it
# layer: mount plan: ~/.cargo/config.toml is a read-only copy without `token`, bound over the re-exposed cargo home
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../mixed_config.sh
source "$(dirname "$0")/../mixed_config.sh"

setup() { plant_mixed_config; }

attempt() {
  capture env HOME="$FAKE_HOME" PATH="$FAKE_HOME/.cargo/bin:/usr/bin:/bin" \
    "$PI_BIN" run --no-prompt --cwd "$WS" -- /bin/cat "$FAKE_HOME/.cargo/config.toml"
  expect_rc 0
  refute "$MIXED_MARKER"
  expect_lines '[registries.corp]' 'index = "sparse+https://cargo.example/index/"'
}

run_attempt "$@"
