#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; `git stash apply` of an entry made with `--include-untracked` that changes a file outside the package writes the entry's untracked file into the package first, then stops on the file outside: the host's package is left half-applied (a file git restored from the stash), exit 1, under a line saying the repository is as it was
# layer: the supervisor: a stash entry's untracked files (its third parent) are among what git may have been writing; the file holding that object, born during the command, is removed again, and the command exits 125
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

setup() {
  new_monorepo
  first_commit
  echo stashed-outside >"$MONO/README.md"
  echo untracked >"$APP/untracked.txt"
  host_git stash -q --include-untracked
}

attempt() {
  apply_put_back 'git stash apply -q'
}

run_attempt "$@"
