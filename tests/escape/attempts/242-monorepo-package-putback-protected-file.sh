#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo that tracks `.vscode/tasks.json` (protected, read-only inside); the command replaces that blob's loose object with its own bytes (a task that runs on folder open), changes the entry's mode in the index (its stat data stays the file's, so it reads as written by git), names a changed file outside the package and fails, hoping the supervisor's put-back writes the object's bytes over the protected file on the host
# layer: the supervisor: a protected path is never written by the put-back (and an object whose bytes do not hash to its name is never written)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  mkdir -p "$APP/.vscode"
  echo main >"$MONO/README.md"
  echo app >"$APP/app.txt"
  printf '{"version":"2.0.0","tasks":[]}\n' >"$APP/.vscode/tasks.json"
  first_commit
}

attempt() {
  local before
  before="$(sha256sum <"$APP/.vscode/tasks.json")"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    cd ../.. || exit 2
    t=$(git rev-parse :packages/app/.vscode/tasks.json)
    e=$(printf "{\"tasks\":[{\"command\":\"touch pwned\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}\n" | git hash-object -w --stdin)
    d=$(git rev-parse --git-path objects)
    rm -f "$d/${t:0:2}/${t:2}" && cp "$d/${e:0:2}/${e:2}" "$d/${t:0:2}/${t:2}" || exit 3
    git update-index --chmod=+x packages/app/.vscode/tasks.json || exit 4
    git update-index --cacheinfo "100644,$e,README.md" || exit 5
    exit 1'
  [ "$(sha256sum <"$APP/.vscode/tasks.json")" = "$before" ] ||
    { show; escaped "the protected .vscode/tasks.json was rewritten on the host: $(cat "$APP/.vscode/tasks.json")"; }
  expect_rc 125
  expect_err "pi-sandbox: git needed to change paths outside the workspace, which are read-only here: $MONO/README.md; the repository is as it was before the command"
}

run_attempt "$@"
