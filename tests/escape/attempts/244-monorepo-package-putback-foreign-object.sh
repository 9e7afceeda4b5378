#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; the command replaces the loose object of a package file with a symlink to a loose object of another repository in the hidden home (whose name it knows), changes the entry's mode in the index, names a changed file outside the package and fails, hoping the supervisor's put-back (`git cat-file blob` on the host, which follows the link and does not check the bytes against the name) copies the hidden object into the package
# layer: the supervisor: an object whose bytes do not hash to its name is never written
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

MONO="$WS/mono"
APP="$MONO/packages/app"
SECRET="$FAKE_HOME/private-notes"
host_git() { (cd "$MONO" && HOME="$FAKE_HOME" git -c core.fsmonitor=false "$@"); }

setup() {
  mkdir -p "$APP" "$SECRET"
  echo main >"$MONO/README.md"
  echo app >"$APP/app.txt"
  { host_git init -q && host_git add -A && host_git commit -qm app; } >/dev/null
  echo 'the-hidden-secret' >"$SECRET/notes.txt"
  (cd "$SECRET" && git init -q && git add notes.txt) >/dev/null
}

attempt() {
  local s
  s="$(cd "$SECRET" && git rev-parse :notes.txt)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "
    [ ! -r '$SECRET/notes.txt' ] || exit 6
    cd ../.. || exit 2
    t=\$(git rev-parse :packages/app/app.txt)
    d=\$(git rev-parse --git-path objects)
    rm -f \"\$d/\${t:0:2}/\${t:2}\" && ln -s '$SECRET/.git/objects/${s:0:2}/${s:2}' \"\$d/\${t:0:2}/\${t:2}\" || exit 3
    git update-index --chmod=+x packages/app/app.txt || exit 4
    git update-index --cacheinfo \"100644,\$t,README.md\" || exit 5
    exit 1"
  ! grep -q the-hidden-secret "$APP/app.txt" ||
    { show; escaped "an object of the hidden home was copied into the package: $(cat "$APP/app.txt")"; }
  expect_rc 125
  expect_err "that could not be put back (git cat-file blob "
  expect_err "(an object replaced in the repository is not written)"
}

run_attempt "$@"
