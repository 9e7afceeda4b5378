#!/usr/bin/env bash
# attempt: create the files that choose the toolchain a build tool runs, which an editor runs the moment it opens the folder (rust-analyzer runs `cargo metadata`): `rust-toolchain.toml` and `rust-toolchain` with a `path` toolchain, `.cargo/config.toml` and `.cargo/config` with `build.rustc-wrapper`, `.yarnrc.yml` with `yarnPath`, `.yarnrc` with `yarn-path`
# layer: the guard: rows of the names host programs run (docs/security.md), each moved to the quarantine the moment it appears
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

FILES=(rust-toolchain.toml rust-toolchain .cargo/config.toml .cargo/config .yarnrc.yml .yarnrc)

attempt() {
  local script="mkdir -p .tc/bin .cargo
" f
  for f in "${FILES[@]}"; do
    script+="try_write $f '[toolchain]\npath = \"$WS/.tc\"\n[build]\nrustc-wrapper = \"$WS/.tc/bin/w\"\nyarnPath: \"$WS/.tc/y.js\"\n'
"
  done
  inside_try "$script"
  expect_rc 0
  for f in "${FILES[@]}"; do host_absent "$WS/$f"; done
  expect_quarantined "$WS/rust-toolchain.toml" "$WS/rust-toolchain" "$WS/.cargo/config.toml" \
    "$WS/.cargo/config" "$WS/.yarnrc.yml" "$WS/.yarnrc"
}

run_attempt "$@"
