#!/usr/bin/env bash
# attempt: the caller was started by a `git -c http.extraHeader=...` (GIT_CONFIG_PARAMETERS, git(1) `-c`): read the header from the environment and through `git config` inside
# layer: environment filter: `GIT_CONFIG_PARAMETERS` is removed by default
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  export GIT_CONFIG_PARAMETERS="'http.extraheader'='Authorization: Bearer env-git-token-$TAG'"
  capture sandbox -c 'env; git config --get-all http.extraheader; echo done'
  unset GIT_CONFIG_PARAMETERS
  refute "env-git-token-$TAG"
  expect_lines 'done'
}

run_attempt "$@"
