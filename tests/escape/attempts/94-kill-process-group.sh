#!/usr/bin/env bash
# attempt: signal the caller's process group and session from inside (`kill -9 0`, `kill -9 -<pgid>`, SIGHUP to the session), where a host canary shares pi-sandbox's group
# layer: pid 1 puts the command in its own session; the pid namespace hides host groups
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  # The canary shares this script's process group, like pi-sandbox does.
  sleep "$TAG" >/dev/null 2>&1 &
  CANARY_PID=$!
  trap 'kill -9 "$CANARY_PID" 2>/dev/null' EXIT
  local pgid
  pgid="$(ps -o pgid= -p $$ | tr -d ' ')"
  capture sandbox -c "kill -9 -$pgid 2>&1; kill -HUP -$pgid 2>&1; kill -9 0"
  # The command killed its own group: SIGKILL, exit 137.
  expect_rc 137
  expect_out "No such process"
  sleep 0.2
  canary_alive || escaped "the caller's process group was signalled from inside"
  [ "$(ps -o pgid= -p "$CANARY_PID" | tr -d ' ')" = "$pgid" ] || escaped "the canary is not in the caller's group"
}

run_attempt "$@"
