#!/usr/bin/env bash
# attempt: make 400 nested repositories (`mkdir -p r{1..400}/.git/hooks`) so that every later command in the workspace fails to set up, out of descriptors under the usual soft limit of 1024 open files
# layer: pid 1 lifts its soft RLIMIT_NOFILE to the hard one while it applies the mount plan (one descriptor per protected path until the root is switched); the command gets the caller's limit back
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

# The next command, started with the usual soft limit (in a subshell: the limit stays there).
next_command() (
  ulimit -Sn 1024 && sandbox -c 'ulimit -n; echo next'
)

attempt() {
  local hard
  hard="$(ulimit -Hn)"
  [ "$hard" = unlimited ] || [ "$hard" -ge 8192 ] ||
    skip "the hard limit of open files is $hard: 400 repositories need more than pi-sandbox can lift to"
  inside_try "mkdir -p r{1..400}/.git/hooks && echo made"
  expect_rc 0
  expect_out "made"
  capture next_command
  expect_rc 0
  expect_out "1024
next"
}

run_attempt "$@"
