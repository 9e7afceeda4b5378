#!/usr/bin/env bash
# attempt: read the hidden home from a workspace inside it: `~/.ssh/id_ed25519`, `~/.bashrc`, `~/.cargo/bin`, by path, by `..`, by `find`
# layer: mount plan: the home replaced by an empty private layer
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
try cat ~/.ssh/id_ed25519
try cat ../.ssh/id_ed25519
try cat ~/.bashrc
try ls ~/.cargo/bin
grep -rs FAKE ~ ../ 2>/dev/null | grep -v "^'"$WS"'" | head -3
find / -xdev -name id_ed25519 2>/dev/null | head -3'
  refute "$FAKE_KEY_MARKER" "fake ~/.bashrc"
  expect_refused "cat $FAKE_HOME/.ssh/id_ed25519" "No such file or directory"
  expect_refused "cat ../.ssh/id_ed25519" "No such file or directory"
  expect_refused "cat $FAKE_HOME/.bashrc" "No such file or directory"
  expect_refused "ls $FAKE_HOME/.cargo/bin" "No such file or directory"
}

run_attempt "$@"
