#!/usr/bin/env bash
# attempt: SIGKILL pi-sandbox at random moments (0-50 ms after start, 30 times, the last 15 with `filesystem.protection: "strict"`) while it sets up, runs `sleep`, and holds placeholders or watches, hoping to leave the command running or placeholders behind
# layer: pid 1's parent-death signal; placeholders removed by pid 1 or adopted by the next (strict) sandbox
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

# shellcheck disable=SC2012 # ls -A: the workspace's top-level names, compared whole
attempt() {
  local before pid ms left
  before="$(ls -A "$WS")"
  local i config=()
  echo '{"filesystem": {"protection": "strict"}}' >"$HOST_DIR/strict-config.json"
  for i in $(seq 30); do
    # The first 15 runs with the guard (the default: nothing to leave behind), the last 15
    # with placeholders (strict), whose leftovers the next strict sandbox adopts.
    config=()
    [ "$i" -gt 15 ] && config=(--config "$HOST_DIR/strict-config.json")
    HOME="$FAKE_HOME" "$PI_BIN" run "${config[@]}" --no-prompt --cwd "$WS" -- sleep "$TAG" </dev/null >/dev/null 2>&1 &
    pid=$!
    ms=$((RANDOM % 51))
    sleep "$(printf '0.%03d' "$ms")"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  # pid 1 dies with its parent and takes the sandbox with it: give it a moment.
  for _ in $(seq 50); do
    left="$(pgrep -f "sleep $TAG")"
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || escaped "sleep $TAG still running after its pi-sandbox was killed: $left"
  # Placeholders: removed by pid 1, or (the documented microsecond window) adopted and
  # removed by the next sandbox of the workspace.
  for _ in $(seq 30); do
    [ "$(ls -A "$WS")" = "$before" ] && break
    sleep 0.1
  done
  if [ "$(ls -A "$WS")" != "$before" ]; then
    echo "leftovers after the kills: $(ls -A "$WS" | tr '\n' ' ')" >&2
    capture sandbox_strict -- true
    [ "$(ls -A "$WS")" = "$before" ] || escaped "placeholders left in the workspace: $(ls -A "$WS" | tr '\n' ' ')"
  fi
  [ -z "$(cd "$WS" && git status --porcelain)" ] || escaped "git status is not clean: $(cd "$WS" && git status --porcelain)"
}

run_attempt "$@"
