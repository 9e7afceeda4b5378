#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; `git stash apply stash@{1}` of an older entry that changes a file outside the package and one inside rewrites the package's file from the entry, then stops on the file outside with HEAD and the index as they were: the host's package is left half-applied, with git's exit status 1
# layer: the supervisor: the stash's reflog entries are among the commits git may have been moving to, the package's file holding that entry's object is put back, and the command exits 125
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  new_monorepo
  first_commit
  echo stashed-outside >"$MONO/README.md"
  echo stashed-inside >"$APP/app.txt"
  host_git stash -q
  echo newer >"$APP/app.txt"
  host_git stash -q
}

attempt() {
  apply_put_back 'git stash apply -q stash@{1}'
}

run_attempt "$@"
