#!/usr/bin/env bash
# attempt: `git config lfs.extension.x.clean <a script in the workspace>` in a nested repository whose files go through Git LFS (the user ran `git lfs install`): the next host `git add` of an LFS file runs the script (a key of a git extension, on no denylist)
# layer: the guard: a configuration change may add only keys of the allowlist of keys that run nothing; `lfs.extension.*` is on none, so it is taken out at once (the attempt quarantined)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  command -v git-lfs >/dev/null || return 0
  git init -q "$WS/proj"
  (cd "$WS/proj" && HOME="$FAKE_HOME" git lfs install --local >/dev/null &&
    echo '*.bin filter=lfs diff=lfs merge=lfs -text' >.gitattributes &&
    HOME="$FAKE_HOME" git add .gitattributes &&
    HOME="$FAKE_HOME" git commit -qm lfs) >/dev/null 2>&1
}

attempt() {
  command -v git-lfs >/dev/null || skip "git-lfs is not installed"
  inside_try "
printf '#!/bin/sh\ntouch $HOST_DIR/pwned-$TAG\ncat\n' > proj/clean.sh && chmod +x proj/clean.sh
try git -C proj config lfs.extension.x.clean '$WS/proj/clean.sh %f'
sleep 0.3
try git -C proj config lfs.extension.x.smudge cat
sleep 0.3
try git -C proj config lfs.extension.x.priority 0"
  expect_rc 0
  # Host git adds an LFS file, with the fake home as its home.
  (cd "$WS/proj" && echo data >a.bin && HOME="$FAKE_HOME" git add a.bin) >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_undone "$WS/proj/.git/config" lfs.extension.x.clean
  local cfg
  cfg="$(HOME="$FAKE_HOME" git -C "$WS/proj" config --local --list)"
  case "${cfg,,}" in *lfs.extension.x.clean*) escaped "left in proj/.git/config: $cfg" ;; esac
}

run_attempt "$@"
