#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; the command points the repository's `objects/info/alternates` at the objects of a repository in the hidden home and replaces `refs/remotes` with a symbolic link to that repository's `refs/heads`, deletes a tracked file of the package and fails, hoping the supervisor, telling what an operation that stopped was moving to, reads the hidden branch through the link, compares it with HEAD through the borrowed objects, and names the hidden repository's files in its line
# layer: the supervisor: nothing is compared in a repository that borrows objects, and git's state is read without following a symbolic link
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

SECRET="$FAKE_HOME/private-notes"

setup() {
  new_monorepo
  mkdir -p "$SECRET/accounts"
  first_commit
  echo 'the-hidden-secret' >"$SECRET/accounts/bank-of-nowhere-4711.txt"
  (cd "$SECRET" && git init -q && git add -A && HOME="$FAKE_HOME" git commit -qm notes) >/dev/null
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "
    [ ! -r '$SECRET/.git' ] || exit 6
    g=\$(git rev-parse --absolute-git-dir) || exit 3
    echo '$SECRET/.git/objects' > \"\$g/objects/info/alternates\" || exit 4
    rm -rf \"\$g/refs/remotes\" && ln -s '$SECRET/.git/refs/heads' \"\$g/refs/remotes\" || exit 5
    rm app.txt || exit 7
    exit 1"
  rm -f "$MONO/.git/objects/info/alternates" "$MONO/.git/refs/remotes"
  case "$ERR" in
  *bank-of-nowhere*) show; escaped "the supervisor named a file of the hidden repository" ;;
  esac
  expect_rc 1
  [ ! -e "$APP/app.txt" ] || { show; escaped "the command's own deletion was put back"; }
}

run_attempt "$@"
