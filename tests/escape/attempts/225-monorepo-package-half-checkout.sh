#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo (`repo/packages/app`): `git checkout` and `git stash` of changes outside it leave the host repository half-changed (HEAD and the index on the other branch with the old files, or a stash entry with the changes still in place) for the next host git command (found in a fresh user's trial)
# layer: the supervisor: the git state is kept before the command and put back when the index names a file outside the workspace that git could not write, or a failed stash left an entry
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

setup() {
  mkdir -p "$MONO/packages/app"
  echo app >"$MONO/packages/app/app.txt"
  echo main >"$MONO/README.md"
  {
    host_git init -q && host_git add -A && host_git commit -qm app
    host_git checkout -qb other && echo other >"$MONO/README.md" && host_git commit -qam other
    host_git checkout -q -
  } >/dev/null
}

attempt() {
  local head status
  head="$(host_git rev-parse HEAD)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$MONO/packages/app" -c \
    'git checkout -q other'
  expect_rc 125
  [ "$(host_git rev-parse HEAD)" = "$head" ] || escaped "the host repository's HEAD moved to other"
  [ -z "$(host_git status --porcelain)" ] || escaped "host git status: $(host_git status --porcelain)"
  expect_err "pi-sandbox: git needed to change paths outside the workspace, which are read-only here: $MONO/README.md; the repository is as it was before the command"
  echo dirty >"$MONO/README.md"
  status="$(host_git status --porcelain)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$MONO/packages/app" -c 'git stash -q'
  expect_rc 125
  [ -z "$(host_git stash list)" ] || escaped "a stash entry was left: $(host_git stash list)"
  [ "$(host_git status --porcelain)" = "$status" ] || escaped "host git status changed"
  host_git checkout -q -- README.md
}

run_attempt "$@"
