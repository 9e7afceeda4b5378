#!/usr/bin/env bash
# attempt: `git config` inside sets `core.fsmonitor`, `include.path`, a `!` alias and `core.hooksPath` in the workspace's `.git/config` (and `core.sshCommand` in a nested repository's), for host git to run; `git remote set-url` must keep working
# layer: the guard: `.git/config` guarded by content, a change adding a dangerous key undone at once (its previous content back, the attempt quarantined)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  git init -q "$WS/proj"
  git -C "$WS/proj" remote add origin https://example.invalid/old.git
}

attempt() {
  inside_try "
printf '[core]\n\tfsmonitor = touch $HOST_DIR/pwned3-$TAG\n' > evil
# (a pause after each change: one made while the guard undoes an earlier one in the same file
# goes with it unnamed, the last accepted content being what is put back)
try git config core.fsmonitor 'touch $HOST_DIR/pwned-$TAG'
sleep 0.3
try git config include.path ../evil
sleep 0.3
try git config alias.st '!touch $HOST_DIR/pwned2-$TAG'
sleep 0.3
try git config core.hooksPath /tmp
try git -C proj remote set-url origin https://example.invalid/new.git
sleep 0.3
try git -C proj config core.sshCommand 'touch $HOST_DIR/pwned4-$TAG'
git config --local --list"
  expect_rc 0
  expect_done "git -C proj remote set-url origin https://example.invalid/new.git"
  expect_undone "$WS/.git/config" core.fsmonitor include.path alias.st core.hooksPath
  expect_undone "$WS/proj/.git/config" core.sshCommand
  # Host git, with the fake home as its home.
  (cd "$WS" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  (cd "$WS" && HOME="$FAKE_HOME" git st >/dev/null 2>&1)
  HOME="$FAKE_HOME" git -C "$WS" status >/dev/null 2>&1
  HOME="$FAKE_HOME" git -C "$WS/proj" fetch -q origin >/dev/null 2>&1
  HOME="$FAKE_HOME" git -C "$WS/proj" ls-remote git@example.invalid:x.git >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG" "$HOST_DIR/pwned2-$TAG" "$HOST_DIR/pwned3-$TAG" \
    "$HOST_DIR/pwned4-$TAG"
  local cfg
  cfg="$(HOME="$FAKE_HOME" git -C "$WS" config --local --list; HOME="$FAKE_HOME" git -C "$WS/proj" config --local --list)"
  case "${cfg,,}" in *fsmonitor* | *include.path* | *alias.* | *hookspath* | *sshcommand*) escaped "left in a .git/config: $cfg" ;; esac
  [ "$(HOME="$FAKE_HOME" git -C "$WS/proj" remote get-url origin)" = https://example.invalid/new.git ] ||
    escaped "git remote set-url did not reach the host: $cfg"
}

run_attempt "$@"
