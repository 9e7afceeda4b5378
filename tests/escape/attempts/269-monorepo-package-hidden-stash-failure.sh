#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo with uncommitted changes inside it and outside it; `git stash 2>&1 | tail -3` saves them, resets the package's file, fails on the file outside, and the pipe's exit status 0 hides it: the host is left with a stash entry and the package's change gone from the working tree
# layer: the supervisor: an operation that cannot have completed (HEAD stayed, an entry added to the stash, the entry changes a path outside the workspace) is settled as a failed one whatever its exit status: the state is put back, the package's file written back from the entry, exit 125
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

setup() {
  new_monorepo
  first_commit
  echo dirty >"$MONO/README.md"
  echo work-in-progress >"$APP/app.txt"
}

attempt() {
  stash_put_back 'git stash 2>&1 | tail -3'
}

run_attempt "$@"
