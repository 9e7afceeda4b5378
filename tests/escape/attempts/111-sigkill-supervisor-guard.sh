#!/usr/bin/env bash
# attempt: SIGKILL pi-sandbox (the supervisor that watches) 50-400 ms into a command that keeps creating `.vscode/x` and `.mcp.json`, 10 times, hoping they outlive the guard
# layer: the guard: pid 1 notices its parent's death, kills the command and sweeps the guarded names itself
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local pid ms round left
  for round in $(seq 10); do
    HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" -c "
while :; do mkdir -p .vscode; echo x > .vscode/x; echo y > .mcp.json; done 2>/dev/null
: $TAG" </dev/null >/dev/null 2>&1 &
    pid=$!
    ms=$((RANDOM % 351 + 50))
    sleep "$(printf '0.%03d' "$ms")"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    # pid 1 sees the parent-death signal, kills the command, sweeps.
    for _ in $(seq 20); do
      left="$(pgrep -f ": $TAG")"
      [ -z "$left" ] && break
      sleep 0.05
    done
    [ -z "$left" ] || escaped "round $round: the command still runs after its pi-sandbox was killed"
    sleep 0.3
    host_absent "$WS/.vscode" "$WS/.mcp.json"
  done
  local entries
  entries="$(ls "$(quarantine_dir)" 2>/dev/null | wc -l)"
  [ "$entries" -ge 1 ] || escaped "nothing reached the quarantine"
  echo "$entries quarantine entries" >&2
}

run_attempt "$@"
