#!/usr/bin/env bash
# attempt: ~/.gitconfig carries a token in `http.<url>.extraHeader` (Azure DevOps' PAT setup, CI scripts): print it with `git config --get-all` from a project workspace
# layer: mount plan: ~/.gitconfig is a read-only copy without `http.*.extraHeader`, bound over the re-exposed file
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '[http "https://dev.azure.test/"]\n\textraHeader = Authorization: Bearer gitconfig-token-%s\n\tsslVerify = true\n' \
    "$TAG" >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  capture sandbox -c 'git config --get-all http.https://dev.azure.test/.extraHeader
cat ~/.gitconfig'
  refute "gitconfig-token-$TAG"
  expect_lines '	sslVerify = true'
  expect_rc 0
}

run_attempt "$@"
