#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; one command links a loose object of the repository to an object of another repository in the hidden home (by its own name) and stages that name for `app.txt`; the next one forges a commit (`ORIG_HEAD`) that holds its own bytes at `app.txt` and changes a file outside the package, writes those bytes there and fails, hoping the supervisor's put-back of an operation that stopped copies the hidden object (what the index before the command named) into the package. `ok` on main too, which has no put-back for an operation that left HEAD and the index as they were: a regression attempt
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
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    a=$(echo forged | git hash-object -w --stdin) || exit 3
    cp "$(git rev-parse --git-path index)" /tmp/forged.idx || exit 4
    export GIT_INDEX_FILE=/tmp/forged.idx
    git update-index --cacheinfo "100644,$a,packages/app/app.txt" \
      --cacheinfo "100644,$a,README.md" || exit 5
    c=$(git commit-tree "$(git write-tree)" -p HEAD -m forged) || exit 6
    unset GIT_INDEX_FILE
    git update-ref ORIG_HEAD "$c" || exit 7
    echo forged > app.txt || exit 8
    exit 1'
  ! grep -q the-hidden-secret "$APP/app.txt" ||
    { show; escaped "an object of the hidden home was copied into the package: $(cat "$APP/app.txt")"; }
  expect_rc 1 125
  [ "$RC" = 1 ] || expect_err "that could not be put back (the repository borrows objects ("
}

run_attempt "$@"
