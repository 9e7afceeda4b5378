#!/bin/bash
# devtools.sh OUT: copies real toolchains of this machine into OUT, readable by every user, so
# that the tests of a real developer machine (real_machine_test.cpp) can lay them out in a test
# home as rustup, cargo and nvm install them: the rustup proxy with a minimal stable toolchain
# (rustc, cargo, the standard library), and the machine's node binary. What the machine does
# not have is left out (the tests say what stands in for it). scripts/test runs this as root.
set -euo pipefail
out="$1"
mkdir -p "$out"
rustup_home="${RUSTUP_HOME:-$HOME/.rustup}"
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
if [ -x "$cargo_home/bin/rustup" ] && [ -d "$rustup_home/toolchains" ]; then
  toolchain="$(ls "$rustup_home/toolchains" | grep '^stable-' | head -n 1 || true)"
  if [ -n "$toolchain" ] && [ ! -e "$out/rustup/settings.toml" ]; then
    src="$rustup_home/toolchains/$toolchain"
    dst="$out/rustup/toolchains/$toolchain"
    triple="${toolchain#stable-}"
    mkdir -p "$dst/bin" "$dst/lib/rustlib/$triple"
    cp "$src/bin/rustc" "$src/bin/cargo" "$dst/bin/"
    cp -a "$src"/lib/*.so* "$dst/lib/"
    cp -a "$src/lib/rustlib/$triple/lib" "$src/lib/rustlib/$triple/bin" "$dst/lib/rustlib/$triple/"
    printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "minimal"\n' "$toolchain" \
      >"$out/rustup/settings.toml"
    mkdir -p "$out/cargo/bin"
    cp "$cargo_home/bin/rustup" "$out/cargo/bin/rustup"
    ln -sf rustup "$out/cargo/bin/cargo"
    ln -sf rustup "$out/cargo/bin/rustc"
  fi
fi
if node="$(command -v node)"; then
  mkdir -p "$out/node/bin"
  cp "$(readlink -f "$node")" "$out/node/bin/node"
fi
chmod -R a+rX "$out"
