#!/usr/bin/env bash
# attempt: 1000 rounds of creating `.mcp.json` and `.vscode/tasks.json` by rename as fast as possible, hoping one survives the guard
# layer: the guard: every rename into place is an event; the final sweep after the command
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -c '
for i in $(seq 1000); do
  echo x > t$i
  mv -f t$i .mcp.json
  mkdir -p .vscode v$i
  echo "{}" > v$i/tasks.json
  mv -f v$i/tasks.json .vscode/tasks.json 2>/dev/null || mv -T v$i .vscode 2>/dev/null
  rm -rf v$i
done 2>/dev/null
echo done'
  expect_rc 0
  expect_out done
  host_absent "$WS/.mcp.json" "$WS/.vscode"
  local moved
  moved="$(grep -c 'to the quarantine (a guarded name' <<<"$ERR")"
  [ "$moved" -ge 2 ] || { show; escaped "only $moved quarantine lines for 2000 creations"; }
  local stray
  stray="$(cd "$WS" && ls -A | grep -E 'pi-sandbox-defused|^\.mcp|^\.vscode' | head -3)"
  [ -z "$stray" ] || escaped "left in the workspace: $stray"
  echo "$moved items quarantined" >&2
}

run_attempt "$@"
