#!/usr/bin/env bash
# attempt: raw IPv4 and IPv6 sockets (ICMP, TCP) to forge packets
# layer: dropped capabilities (no CAP_NET_RAW)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc socket:raw4 socket:raw6 socket:rawtcp
  expect_rc 0
  expect_sc socket:raw4 "EPERM (Operation not permitted)"
  expect_sc socket:raw6 "EPERM (Operation not permitted)" "EAFNOSUPPORT"
  expect_sc socket:rawtcp "EPERM (Operation not permitted)"
}

run_attempt "$@"
