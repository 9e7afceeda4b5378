#!/usr/bin/env bash
# attempt: connect straight to a TCP service on the host's 127.0.0.1 (and 127.0.0.2, 0.0.0.0), bypassing the proxy
# layer: namespaces: a private network namespace whose loopback is not the host's
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen tcp 127.0.0.1
  inside_sc "connect:127.0.0.1,$LISTEN_PORT" "connect:127.0.0.2,$LISTEN_PORT" "connect:0.0.0.0,$LISTEN_PORT"
  expect_rc 0
  expect_sc "connect:127.0.0.1,$LISTEN_PORT" "ECONNREFUSED (Connection refused)"
  expect_sc "connect:127.0.0.2,$LISTEN_PORT" "ECONNREFUSED (Connection refused)"
  expect_sc "connect:0.0.0.0,$LISTEN_PORT" "ECONNREFUSED (Connection refused)"
  listen_saw_nothing
}

run_attempt "$@"
