#!/usr/bin/env bash
# attempt: `kill -9 -1` inside (every process the caller may signal), hoping to reach a host canary (`sleep` of the same user)
# layer: namespaces: a pid namespace (and Landlock's signal scope from ABI 6)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_canary
  capture sandbox -c 'sleep 30 & kill -9 -1; echo survived'
  expect_rc 0
  expect_lines survived
  sleep 0.2
  canary_alive || escaped "kill -9 -1 inside killed the host canary"
}

run_attempt "$@"
