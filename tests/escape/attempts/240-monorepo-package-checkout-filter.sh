#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; `git checkout other`, whose branch changes files inside the package (content, a file added, one deleted, an executable bit, a symlink) and outside it, leaves the package on `other` with HEAD on `main` and exits 0; with a `.gitattributes` the command plants (`* filter=canary`, a driver of the user's global config) and the user's `core.fsmonitor`, hoping pi-sandbox runs them on the host while it puts the package back
# layer: the supervisor: the git state is put back, the package's files git wrote are rewritten from the objects as the index before the command held them (`git cat-file blob`, no filter, `core.fsmonitor` off, attributes only from the index), and the command exits 125
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

# Every entry of the package but the `.gitattributes` the command plants.
package() {
  (cd "$APP" && find . -path ./.gitattributes -prune -o -printf '%p %M %s %l\n' | sort &&
    find . -type f ! -name .gitattributes -exec sha256sum {} + | sort)
}

setup() {
  mkdir -p "$APP/sub"
  echo main >"$MONO/README.md"
  echo app >"$APP/app.txt"
  echo gone >"$APP/sub/gone.txt"
  printf '#!/bin/sh\n' >"$APP/run.sh"
  chmod 644 "$APP/run.sh"
  ln -s app.txt "$APP/link"
  echo mine >"$APP/untracked.txt"
  {
    printf 'untracked.txt\n' >"$MONO/.gitignore"
    host_git init -q && host_git add -A && host_git commit -qm app
    host_git checkout -qb other && echo other >"$MONO/README.md" && echo other >"$APP/app.txt"
    host_git rm -q packages/app/sub/gone.txt && mkdir "$APP/new" && echo added >"$APP/new/added.txt"
    chmod +x "$APP/run.sh" && ln -sfn run.sh "$APP/link"
    host_git add -A && host_git commit -qm other && host_git checkout -q -
    # What would run on the host if pi-sandbox ran git there with the command's attributes or
    # the user's own fsmonitor: the user's filter driver (as git-lfs installs one) and hook.
    HOME="$FAKE_HOME" git config --global filter.canary.smudge "touch '$HOST_DIR/filter-ran'; cat"
    HOME="$FAKE_HOME" git config --global filter.canary.clean cat
    HOME="$FAKE_HOME" git config --global core.fsmonitor "touch '$HOST_DIR/fsmonitor-ran'; false"
  } >/dev/null
}

attempt() {
  local head before
  head="$(host_git rev-parse HEAD)"
  before="$(package)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c \
    "printf '* filter=canary\n' > .gitattributes && git checkout -q other"
  [ ! -e "$HOST_DIR/filter-ran" ] || escaped "the filter driver ran on the host"
  [ ! -e "$HOST_DIR/fsmonitor-ran" ] || escaped "core.fsmonitor ran on the host"
  [ "$(package)" = "$before" ] || { show; escaped "the package is not as it was: $(diff <(echo "$before") <(package) | tr '\n' ' ')"; }
  [ "$(host_git rev-parse HEAD)" = "$head" ] || escaped "the host repository's HEAD moved to other"
  expect_rc 125
  expect_err "pi-sandbox: git needed to change paths outside the workspace, which are read-only here: $MONO/README.md; the repository is as it was before the command; the command's exit status is 125"
  rm -f "$APP/.gitattributes"
  [ "$(host_git status --porcelain)" = "" ] || escaped "host git status: $(host_git status --porcelain)"
}

run_attempt "$@"
