#!/usr/bin/env bash
# attempt: ~/.gitconfig holds a password inline in a shell credential helper (`credential.helper = "!f() { echo password=TOKEN; }; f"`): ask git for it with `git credential fill` and print the file, from a project workspace
# layer: mount plan: ~/.gitconfig is a read-only copy without `credential.helper` of any URL
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '[credential "https://git.test"]\n\tusername = me\n\thelper = "!f() { echo password=helper-secret-%s; }; f"\n[user]\n\tname = Helper Test\n' \
    "$TAG" >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  capture sandbox -c 'cat ~/.gitconfig
printf "protocol=https\nhost=git.test\n\n" | GIT_TERMINAL_PROMPT=0 git credential fill'
  refute "helper-secret-$TAG"
  expect_lines '	username = me' '	name = Helper Test'
}

run_attempt "$@"
