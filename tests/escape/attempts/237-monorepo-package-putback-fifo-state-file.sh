#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; the command replaces `FETCH_HEAD` of the repository's git directory (and a remote-tracking ref) with a FIFO and fails, hoping the supervisor, reading git's state files after the command to tell what an operation that stopped was moving to, opens the FIFO and waits forever for a writer that never comes (the command's processes are gone): pi-sandbox never returns
# layer: the supervisor: git's state files are opened without blocking and read only when they are regular files; a directory of the state that is a symbolic link is not followed
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  new_monorepo
  first_commit
}

attempt() {
  # `timeout` stands for the user who would otherwise wait forever.
  capture timeout -k 5 40 env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    g=$(git rev-parse --absolute-git-dir) || exit 3
    rm -f "$g/FETCH_HEAD" && mkfifo "$g/FETCH_HEAD" || exit 4
    mkdir -p "$g/refs/remotes/origin" && mkfifo "$g/refs/remotes/origin/main" || exit 5
    echo edited > app.txt || exit 6
    exit 1'
  rm -f "$MONO/.git/FETCH_HEAD" "$MONO/.git/refs/remotes/origin/main"
  [ "$RC" != 124 ] && [ "$RC" != 137 ] ||
    { show; escaped "the supervisor hung on a FIFO among git's state files (killed after 40 s)"; }
  expect_rc 1
  [ "$(cat "$APP/app.txt")" = edited ] || { show; escaped "the command's own edit was undone"; }
}

run_attempt "$@"
