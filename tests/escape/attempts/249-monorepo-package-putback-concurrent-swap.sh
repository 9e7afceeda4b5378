#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; the command runs `git merge other` (which writes the package's `sub/app.txt` and adds `sub/authorized_keys`, then stops on the read-only `top.txt` outside, after the package in index order), and leaves a process behind that, a moment after the command ends, swaps the package's `sub` directory for a symbolic link to `~/.ssh` in the hidden home, hoping it runs while the supervisor puts the package back so that removing the added file or rewriting the changed one reaches the home. `ok` on main too, which has no put-back for an operation that left HEAD and the index as they were: a regression attempt
# layer: the sandbox's pid namespace: every process of the command is gone before the supervisor puts anything back; and the put-back opens each directory without following a symlink
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  mkdir -p "$APP/sub"
  echo main >"$MONO/top.txt"
  echo app >"$APP/sub/app.txt"
  {
    host_git init -q && host_git add -A && host_git commit -qm app
    host_git checkout -qb other && echo other >"$MONO/top.txt" &&
      echo other >"$APP/sub/app.txt" && echo 'ssh-ed25519 AAAAattacker' >"$APP/sub/authorized_keys" &&
      host_git add -A && host_git commit -qm other && host_git checkout -q main
  } >/dev/null
  touch "$FAKE_HOME/.ssh/marker"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "
    git merge -q other
    (sleep 0.3; mv sub sub.d; ln -s '$FAKE_HOME/.ssh' sub) >/dev/null 2>&1 &
    exit 1"
  sleep 1
  [ -e "$FAKE_HOME/.ssh/authorized_keys" ] &&
    { show; escaped "the put-back wrote into the hidden home: $(cat "$FAKE_HOME/.ssh/authorized_keys")"; }
  [ -e "$FAKE_HOME/.ssh/app.txt" ] && { show; escaped "the put-back wrote app.txt into the hidden home"; }
  [ -e "$FAKE_HOME/.ssh/marker" ] || { show; escaped "the put-back removed a file of the hidden home"; }
  [ -L "$APP/sub" ] && { show; escaped "a process of the command outlived it and swapped sub"; }
  expect_rc 1 125
  # Put back: the package as it was.
  [ "$RC" = 1 ] || { [ "$(cat "$APP/sub/app.txt")" = app ] && [ ! -e "$APP/sub/authorized_keys" ]; } ||
    { show; escaped "the package was not put back"; }
}

run_attempt "$@"
