#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; one command links a loose object of the repository to an object of another repository in the hidden home (by its own name, which it knows) and stages that name for a package file; the next one rewrites and stages the file, names a changed file outside the package and fails, hoping the supervisor's put-back (`git cat-file blob` on the host, which follows the link; the bytes hash to their name) copies the hidden object into the package
# layer: the supervisor: an object is read only from the repository's own files (no symbolic link in the object directory) and only when its bytes hash to its name
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

SECRET="$FAKE_HOME/private-notes"

setup() {
  new_monorepo
  mkdir -p "$SECRET"
  first_commit
  echo 'the-hidden-secret' >"$SECRET/notes.txt"
  (cd "$SECRET" && git init -q && git add notes.txt) >/dev/null
}

attempt() {
  local s
  s="$(cd "$SECRET" && git rev-parse :notes.txt)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "
    [ ! -r '$SECRET/notes.txt' ] || exit 6
    d=\$(git rev-parse --git-path objects)
    mkdir -p \"\$d/${s:0:2}\" && ln -s '$SECRET/.git/objects/${s:0:2}/${s:2}' \"\$d/${s:0:2}/${s:2}\" || exit 3
    git update-index --cacheinfo '100644,$s,packages/app/app.txt' || exit 4"
  expect_rc 0
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "
    echo mine > app.txt && git add app.txt || exit 4
    git update-index --cacheinfo '100644,$s,README.md' || exit 5
    exit 1"
  ! grep -q the-hidden-secret "$APP/app.txt" ||
    { show; escaped "an object of the hidden home was copied into the package: $(cat "$APP/app.txt")"; }
  expect_rc 125
  expect_err "that could not be put back (the repository borrows objects ("
}

run_attempt "$@"
