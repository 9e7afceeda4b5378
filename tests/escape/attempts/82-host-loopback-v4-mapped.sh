#!/usr/bin/env bash
# attempt: connect to the host's 127.0.0.1 service through the IPv4-mapped IPv6 address `::ffff:127.0.0.1`
# layer: namespaces: a private network namespace whose loopback is not the host's
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen tcp 127.0.0.1
  inside_sc "connect:::ffff:127.0.0.1,$LISTEN_PORT" "connect:::ffff:7f00:1,$LISTEN_PORT"
  expect_rc 0
  expect_sc "connect:::ffff:127.0.0.1,$LISTEN_PORT" "ECONNREFUSED (Connection refused)" \
    "ENETUNREACH" "EAFNOSUPPORT"
  expect_sc "connect:::ffff:7f00:1,$LISTEN_PORT" "ECONNREFUSED (Connection refused)" \
    "ENETUNREACH" "EAFNOSUPPORT"
  listen_saw_nothing
}

run_attempt "$@"
