#!/usr/bin/env bash
# attempt: git credential-store's second file `~/.config/git/credentials` (git-credential-store(1), FILES): read it from a workspace that is the home, and through `git credential fill`
# layer: mount plan: `~/.config/git/credentials` is a credential of the table, masked empty
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$FAKE_HOME/.config/git"
  printf 'https://me:xdg-store-secret-%s@git.test\n' "$TAG" >"$FAKE_HOME/.config/git/credentials"
  chmod 600 "$FAKE_HOME/.config/git/credentials"
}

attempt() {
  capture sandbox_home -c 'cat ~/.config/git/credentials
printf "protocol=https\nhost=git.test\n\n" | GIT_TERMINAL_PROMPT=0 git -c credential.helper=store credential fill'
  refute "xdg-store-secret-$TAG"
}

run_attempt "$@"
