#!/usr/bin/env bash
# attempt: with the workspace inside the home, change git's global configuration (`~/.gitconfig`, `~/.config/git/config`) that the sandbox re-exposes
# layer: mount plan: the re-exposed git configuration is bound read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
try_write ~/.gitconfig
try_write ~/.config/git/config
try git config --global alias.st "!touch /tmp/pwned"
try rm -f ~/.gitconfig'
  expect_rc 0
  expect_refused "write $FAKE_HOME/.gitconfig" "Read-only file system"
  expect_refused "write $FAKE_HOME/.config/git/config" "Read-only file system"
  expect_refused "git config --global alias.st !touch /tmp/pwned" "Read-only file system" \
    "could not lock config file" "Device or resource busy"
  expect_refused "rm -f $FAKE_HOME/.gitconfig" "Device or resource busy" "Read-only file system"
  # And it is readable: git inside knows the user.
  capture sandbox -c 'git config user.email'
  expect_out escape@example.invalid
}

run_attempt "$@"
