#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; a first command stages `gd/hooks/post-checkout` (an executable hook) in the monorepo's index without creating the file; a second one makes `gd` the git directory of a new nested repository (`git init --separate-git-dir`: the name of no `.git`), unstages the hook, names a changed file outside the package and fails, hoping the supervisor's put-back, which runs after the guard's last look for hooks in repositories the command created, writes the hook where host git runs it
# layer: the supervisor: nothing is made or removed below a git directory of the workspace (a directory holding `HEAD`, `objects` and `refs`, or one a `.git` file names) by the put-back
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
    b=$(printf "#!/bin/sh\ntouch \"\$HOME/pwned\"\n" | git hash-object -w --stdin) || exit 3
    git update-index --add --cacheinfo "100755,$b,packages/app/gd/hooks/post-checkout" || exit 4'
  expect_rc 0
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    git init -q --separate-git-dir="$PWD/gd" sub || exit 3
    git rm -q --cached gd/hooks/post-checkout || exit 4
    e=$(git rev-parse :packages/app/app.txt)
    git update-index --cacheinfo "100644,$e,README.md" || exit 5
    exit 1'
  [ -e "$APP/gd/hooks/post-checkout" ] &&
    { show; escaped "the put-back wrote a hook of a repository the command created: $(ls -l "$APP/gd/hooks/post-checkout")"; }
  expect_rc 125
}

run_attempt "$@"
