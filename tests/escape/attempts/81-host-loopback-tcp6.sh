#!/usr/bin/env bash
# attempt: connect straight to a TCP service on the host's [::1] (and [::]), bypassing the proxy
# layer: namespaces: a private network namespace whose loopback is not the host's
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen tcp ::1
  inside_sc "connect:::1,$LISTEN_PORT" "connect:::,$LISTEN_PORT"
  expect_rc 0
  expect_sc "connect:::1,$LISTEN_PORT" "ECONNREFUSED (Connection refused)" \
    "EADDRNOTAVAIL" "ENETUNREACH"
  expect_sc "connect:::,$LISTEN_PORT" "ECONNREFUSED (Connection refused)" \
    "EADDRNOTAVAIL" "ENETUNREACH"
  listen_saw_nothing
}

run_attempt "$@"
