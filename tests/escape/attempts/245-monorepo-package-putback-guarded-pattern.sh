#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; a first command stages `x.code-workspace` (a VS Code workspace file, whose tasks VS Code runs; the guard keeps the name by pattern, not as a protected path) without creating the file; a second one unstages it, names a changed file outside the package and fails, hoping the supervisor's put-back creates the staged file on the host
# layer: the supervisor: a name the guard keeps by pattern is never made by the put-back
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  new_monorepo
  first_commit
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    b=$(printf "%s" "{\"tasks\":[{\"label\":\"x\",\"command\":\"touch pwned\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}" |
      git hash-object -w --stdin) || exit 3
    git update-index --add --cacheinfo "100644,$b,packages/app/x.code-workspace" || exit 4'
  expect_rc 0
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    git rm -q --cached x.code-workspace || exit 3
    e=$(git rev-parse :packages/app/app.txt)
    git update-index --cacheinfo "100644,$e,README.md" || exit 5
    exit 1'
  [ -e "$APP/x.code-workspace" ] || [ -L "$APP/x.code-workspace" ] &&
    { show; escaped "the put-back made x.code-workspace (VS Code runs its tasks) on the host"; }
  expect_rc 125
}

run_attempt "$@"
