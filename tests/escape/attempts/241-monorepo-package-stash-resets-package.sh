#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo with uncommitted changes inside it (a change, a deletion, an executable bit) and outside it; `git stash` saves them, resets the package's files, then fails on the file outside: the package's changes are gone from the working tree (kept only in an unreachable stash commit)
# layer: the supervisor: the git state is put back, the package's files the reset rewrote are written back from the stash entry's trees (`git ls-tree`, `git cat-file blob`, no filter, `core.fsmonitor` off), and the command exits 125
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  new_monorepo
  echo gone >"$APP/gone.txt"
  printf '#!/bin/sh\n' >"$APP/run.sh"
  chmod 644 "$APP/run.sh"
  first_commit
  echo dirty >"$MONO/README.md"
  echo work-in-progress >"$APP/app.txt"
  rm "$APP/gone.txt"
  chmod +x "$APP/run.sh"
}

attempt() {
  stash_put_back 'git stash -q'
}

run_attempt "$@"
