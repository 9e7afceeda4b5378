#!/usr/bin/env bash
# attempt: `git config lfs.customtransfer.x.path /bin/sh` with its `args` and `lfs.standalonetransferagent x` in a nested repository: the next host `git lfs push` (or the pre-push hook of `git push`) runs the command
# layer: the guard: a configuration change may add only keys of the allowlist; `lfs.customtransfer.*` and `lfs.standalonetransferagent` are on none, so they are taken out at once
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  command -v git-lfs >/dev/null || return 0
  git init -q "$WS/proj"
  (cd "$WS/proj" && HOME="$FAKE_HOME" git lfs install --local >/dev/null &&
    echo '*.bin filter=lfs diff=lfs merge=lfs -text' >.gitattributes && echo data >a.bin &&
    HOME="$FAKE_HOME" git add .gitattributes a.bin &&
    HOME="$FAKE_HOME" git commit -qm lfs) >/dev/null 2>&1
}

attempt() {
  command -v git-lfs >/dev/null || skip "git-lfs is not installed"
  inside_try "
try git -C proj config lfs.customtransfer.x.path /bin/sh
sleep 0.3
try git -C proj config lfs.customtransfer.x.args \"-c 'touch $HOST_DIR/pwned-$TAG'\"
sleep 0.3
try git -C proj config lfs.standalonetransferagent x"
  expect_rc 0
  (cd "$WS/proj" && HOME="$FAKE_HOME" timeout 20 git lfs push --all https://example.invalid/x) \
    >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG"
  expect_undone "$WS/proj/.git/config" lfs.customtransfer.x.path
  local cfg
  cfg="$(HOME="$FAKE_HOME" git -C "$WS/proj" config --local --list)"
  case "${cfg,,}" in *customtransfer* | *standalonetransferagent*) escaped "left in proj/.git/config: $cfg" ;; esac
}

run_attempt "$@"
