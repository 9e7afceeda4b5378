#!/usr/bin/env bash
# attempt: workspace = the home: forge, truncate or move away the approval audit log `~/.pi/agent/logs/pi-sandbox-audit.jsonl`
# layer: mount plan: the agent's logs directory is a protected path
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$FAKE_HOME/.pi/agent/logs"
  echo '{"event":"genuine"}' >"$FAKE_HOME/.pi/agent/logs/pi-sandbox-audit.jsonl"
}

attempt() {
  local log=.pi/agent/logs/pi-sandbox-audit.jsonl
  inside_try "
try_write $log '{\"event\":\"forged\"}\\n'
try truncate -s 0 $log
try rm -f $log
try mv .pi/agent/logs .pi/agent/logs-old
try touch .pi/agent/logs/other.jsonl" sandbox_home
  expect_rc 0
  expect_refused "write $log" "Read-only file system"
  expect_refused "truncate -s 0 $log" "Read-only file system"
  expect_refused "rm -f $log" "Read-only file system" "Device or resource busy"
  expect_refused "mv .pi/agent/logs .pi/agent/logs-old" "Device or resource busy" "Read-only file system"
  expect_refused "touch .pi/agent/logs/other.jsonl" "Read-only file system"
  grep -q genuine "$FAKE_HOME/$log" || escaped "the audit log lost its line"
  if grep -q forged "$FAKE_HOME/$log"; then escaped "a forged line reached the audit log"; fi
  host_absent "$FAKE_HOME/.pi/agent/logs-old" "$FAKE_HOME/.pi/agent/logs/other.jsonl"
}

run_attempt "$@"
