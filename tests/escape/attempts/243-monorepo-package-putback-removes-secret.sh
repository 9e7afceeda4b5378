#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo with an untracked `.env` (a secret, protected: read-only inside); the command stages it with `git add -f` (the new entry holds the file's stat data, so it reads as a file git wrote), names a changed file outside the package and fails, hoping the supervisor's put-back removes the "added" file on the host
# layer: the supervisor: a protected path is never removed by the put-back
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
    git add -f .env || exit 3
    e=$(git rev-parse :packages/app/app.txt)
    git update-index --cacheinfo "100644,$e,README.md" || exit 5
    exit 1'
  [ -f "$APP/.env" ] || { show; escaped "the protected .env was removed on the host"; }
  [ "$(cat "$APP/.env")" = "API_KEY=the-users-own" ] || escaped "the protected .env was changed on the host"
  expect_rc 125
  expect_err "pi-sandbox: git needed to change paths outside the workspace, which are read-only here: $MONO/README.md; the repository is as it was before the command"
}

run_attempt "$@"
