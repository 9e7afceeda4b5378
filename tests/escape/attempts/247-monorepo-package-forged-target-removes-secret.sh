#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo with an untracked `.env` (a secret, protected: read-only inside); the command forges a commit (`ORIG_HEAD`) that adds `.env` with the very bytes of the user's file, changes `app.txt` and a file outside the package, writes that `app.txt` and fails, hoping the supervisor's put-back of an operation that stopped takes `.env` for a file git added and removes it on the host. `ok` on main too, which has no put-back for an operation that left HEAD and the index as they were: a regression attempt
# layer: the supervisor: only a file born during the command is taken for one git added, and a protected path is never compared nor removed
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  new_monorepo
  printf '.env\n' >"$MONO/.gitignore"
  first_commit
  echo 'API_KEY=the-users-own' >"$APP/.env"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    e=$(echo API_KEY=the-users-own | git hash-object -w --stdin) || exit 3
    a=$(echo forged | git hash-object -w --stdin) || exit 3
    cp "$(git rev-parse --git-path index)" /tmp/forged.idx || exit 4
    export GIT_INDEX_FILE=/tmp/forged.idx
    git update-index --add --cacheinfo "100644,$e,packages/app/.env" \
      --cacheinfo "100644,$a,packages/app/app.txt" --cacheinfo "100644,$a,README.md" || exit 5
    c=$(git commit-tree "$(git write-tree)" -p HEAD -m forged) || exit 6
    unset GIT_INDEX_FILE
    git update-ref ORIG_HEAD "$c" || exit 7
    echo forged > app.txt || exit 8
    exit 1'
  [ -f "$APP/.env" ] || { show; escaped "the protected .env was removed on the host"; }
  [ "$(cat "$APP/.env")" = "API_KEY=the-users-own" ] || escaped "the protected .env was changed on the host"
  expect_rc 1 125
  [ "$RC" = 1 ] || [ "$(cat "$APP/app.txt")" = app ] || { show; escaped "app.txt was not put back"; }
}

run_attempt "$@"
