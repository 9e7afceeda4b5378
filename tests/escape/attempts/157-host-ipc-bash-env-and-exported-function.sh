#!/usr/bin/env bash
# attempt: the caller's `BASH_ENV` points at a workspace file, or an exported `tmux` function runs a workspace file; a command writes that file, and the next approved host-IPC run of `tmux -V` (run by bash) runs it on the host
# layer: session: the host-IPC run's environment has no `BASH_ENV`/`ENV` pointing into a writable place and no exported function (`BASH_FUNC_*`)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '{"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"]}}\n' >"$HOST_DIR/config.json"
  printf '#!/bin/sh\ncat >/dev/null\necho "{\\"outcome\\":\\"allow\\",\\"risk_level\\":\\"low\\",\\"rationale\\":\\"ok\\"}"\n' >"$HOST_DIR/allow"
  chmod +x "$HOST_DIR/allow"
}

attempt() {
  local marker="$HOST_DIR/planted-file-ran-on-host"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" \
    --config "$HOST_DIR/config.json" --reviewer "$HOST_DIR/allow" \
    -c "printf 'touch $marker.bash_env\n' > env.sh; printf '#!/bin/sh\ntouch $marker.function\n' > tmux.sh; chmod +x tmux.sh; echo planted"
  expect_rc 0
  expect_out planted
  capture env BASH_ENV="$WS/env.sh" ENV="$WS/env.sh" "BASH_FUNC_tmux%%=() {  $WS/tmux.sh; }" \
    HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" \
    --config "$HOST_DIR/config.json" --reviewer "$HOST_DIR/allow" -c "tmux -V"
  host_absent "$marker.bash_env" "$marker.function"
  expect_rc 0
  expect_out "$(tmux -V)"
}

run_attempt "$@"
