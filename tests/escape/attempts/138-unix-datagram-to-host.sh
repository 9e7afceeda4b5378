#!/usr/bin/env bash
# attempt: send a datagram to a host Unix datagram socket (like /dev/log or systemd's notify socket) from a datagram socket and a socketpair, SOCK_DGRAM and SOCK_RAW (which AF_UNIX makes a datagram socket)
# layer: seccomp (Unix datagram and raw sockets and pairs → EPERM: sendto names its destination where no filter can read it)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen unix-dgram "$HOST_DIR/log.sock"
  inside_sc "dgramsend:$HOST_DIR/log.sock"
  expect_rc 0
  expect_sc "dgramsend:$HOST_DIR/log.sock" "EPERM (Operation not permitted)"
  listen_saw_nothing
}

run_attempt "$@"
