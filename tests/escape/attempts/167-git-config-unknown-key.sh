#!/usr/bin/env bash
# attempt: `git config foo.bar x` and `git config newext.hook.command ...` in a nested repository's `.git/config`: keys that no program reads today, as a git extension released tomorrow would bring (today's `lfs.extension.*.clean` is one such key that runs a command); they must not reach the host's configuration
# layer: the guard: a configuration change may add only keys of the allowlist of keys that run nothing; every other key is taken out at once, the attempt quarantined, and `git remote add` alongside stays
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  git init -q "$WS/proj"
}

attempt() {
  inside_try "
try git -C proj config foo.bar x
sleep 0.3
try git -C proj config newext.hook.command 'touch $HOST_DIR/pwned-$TAG'
sleep 0.3
try git -C proj remote add upstream https://example.invalid/up.git
sleep 0.3
try git -C proj config pull.rebase true"
  expect_rc 0
  expect_undone "$WS/proj/.git/config" foo.bar newext.hook.command
  local cfg
  cfg="$(HOME="$FAKE_HOME" git -C "$WS/proj" config --local --list)"
  case "${cfg,,}" in *foo.bar* | *newext.*) escaped "left in .git/config: $cfg" ;; esac
  [ "$(HOME="$FAKE_HOME" git -C "$WS/proj" remote get-url upstream 2>/dev/null)" = https://example.invalid/up.git ] ||
    escaped "git remote add did not reach the host: $cfg"
  [ "$(HOME="$FAKE_HOME" git -C "$WS/proj" config pull.rebase)" = true ] ||
    escaped "git config pull.rebase true did not reach the host: $cfg"
}

run_attempt "$@"
