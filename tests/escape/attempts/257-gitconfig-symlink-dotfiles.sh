#!/usr/bin/env bash
# attempt: ~/.gitconfig is a symlink into a dotfiles repository (`~/.gitconfig -> dotfiles/gitconfig`) and holds `http.extraHeader`: print ~/.gitconfig from a project workspace, where it is re-exposed
# layer: mount plan: the copy without `http.extraHeader` stands where the command reads the re-exposed file, at ~/.gitconfig
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$FAKE_HOME/dotfiles"
  cat "$FAKE_HOME/.gitconfig" >"$FAKE_HOME/dotfiles/gitconfig"
  printf '[http]\n\textraHeader = Authorization: Bearer dotfiles-token-%s\n\tsslVerify = true\n' \
    "$TAG" >>"$FAKE_HOME/dotfiles/gitconfig"
  rm "$FAKE_HOME/.gitconfig"
  ln -s dotfiles/gitconfig "$FAKE_HOME/.gitconfig"
}

attempt() {
  capture sandbox -c 'cat ~/.gitconfig
git config --global --get-all http.extraHeader'
  refute "dotfiles-token-$TAG"
  expect_lines '	sslVerify = true'
}

run_attempt "$@"
