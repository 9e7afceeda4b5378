#!/usr/bin/env bash
# attempt: the agent was started with `./node_modules/.bin`, a workspace `.venv/bin` and an empty entry (the working directory) on PATH; a command plants `tmux` in all three, and the next approved host-IPC run of `tmux -V` runs the planted file on the host, its output looking normal
# layer: session: the host-IPC run gets PATH less relative, empty and writable entries, and its question names the file it runs (`resolvedPath`, the audit line)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '{"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"]}}\n' >"$HOST_DIR/config.json"
  printf '#!/bin/sh\ncat >/dev/null\necho "{\\"outcome\\":\\"allow\\",\\"risk_level\\":\\"low\\",\\"rationale\\":\\"ok\\"}"\n' >"$HOST_DIR/allow"
  chmod +x "$HOST_DIR/allow"
}

attempt() {
  local marker="$HOST_DIR/planted-tmux-ran-on-host"
  local path="./node_modules/.bin:$WS/.venv/bin::$PATH"
  capture env PATH="$path" HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" \
    --config "$HOST_DIR/config.json" --reviewer "$HOST_DIR/allow" \
    -c "mkdir -p node_modules/.bin .venv/bin; for d in node_modules/.bin .venv/bin .; do printf '#!/bin/sh\ntouch $marker\necho tmux 9.9-planted\n' > \$d/tmux; chmod +x \$d/tmux; done; echo planted"
  expect_rc 0
  expect_out planted
  capture env PATH="$path" HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" \
    --config "$HOST_DIR/config.json" --reviewer "$HOST_DIR/allow" -c "tmux -V"
  host_absent "$marker"
  refute "planted"
  expect_rc 0
  expect_out "$(tmux -V)"
  # The decision's audit line names the file that ran.
  grep -F '"command":"tmux -V"' "$FAKE_HOME/.pi/agent/logs/pi-sandbox-audit.jsonl" |
    grep -qF '"path":"'"$(command -v tmux)"'"' ||
    escaped "no audit line names $(command -v tmux)"
}

run_attempt "$@"
