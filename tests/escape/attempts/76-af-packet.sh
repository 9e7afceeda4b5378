#!/usr/bin/env bash
# attempt: AF_PACKET sockets (raw and datagram) to sniff or forge frames below IP
# layer: dropped capabilities (no CAP_NET_RAW) in a namespace with only a loopback
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc socket:packet socket:packet-dgram
  expect_rc 0
  expect_sc socket:packet "EPERM (Operation not permitted)"
  expect_sc socket:packet-dgram "EPERM (Operation not permitted)"
}

run_attempt "$@"
