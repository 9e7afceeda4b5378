#!/usr/bin/env bash
# attempt: a domain entry `"github.com\u0000.evil.com"` in the trusted configuration is reported cut at the NUL (`github.com`), hiding what the file says
# layer: configuration validation: every message shows the input escaped and whole, with a reason
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '{"network":{"allowedDomains":["github.com\\u0000.evil.com"]}}\n' >"$HOST_DIR/nul.json"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" config check "$HOST_DIR/nul.json"
  expect_rc 2
  expect_err 'github.com\u0000.evil.com' 'github.com\x00.evil.com' 'github.com\0.evil.com'
  # A reason beyond "invalid domain pattern: <entry>".
  local rest="$ERR"
  rest="${rest//pi-sandbox: /}"
  rest="${rest//invalid pi-sandbox configuration: /}"
  rest="${rest//network.allowedDomains\[0\]/}"
  rest="${rest//contains an invalid domain pattern/}"
  for entry in 'github.com\u0000.evil.com' 'github.com\x00.evil.com' 'github.com\0.evil.com'; do
    rest="${rest//"$entry"/}"
  done
  [[ "$rest" =~ [A-Za-z]{3,} ]] || { show; escaped "no reason given beyond the entry"; }
  # The run refuses the file the same way, before anything starts.
  capture sandbox --config "$HOST_DIR/nul.json" -c 'echo started'
  expect_rc 125
  refute started
  expect_err 'github.com\u0000.evil.com' 'github.com\x00.evil.com' 'github.com\0.evil.com'
}

run_attempt "$@"
