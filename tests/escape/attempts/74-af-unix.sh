#!/usr/bin/env bash
# attempt: create Unix-domain sockets (stream and datagram) to reach host services such as ssh-agent, docker, tmux, D-Bus
# layer: seccomp (datagram sockets and pairs → EPERM; stream sockets made, their `connect` brokered: see 136-139)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc socket:unix socket:unix-dgram socketpair
  expect_rc 0
  if grep -q "socket(AF_UNIX) is refused inside" <<<"$("$PI_BIN" doctor 2>&1)"; then
    expect_sc socket:unix "EPERM (Operation not permitted)"
  else
    expect_sc socket:unix "OK"
  fi
  expect_sc socket:unix-dgram "EPERM (Operation not permitted)"
  expect_sc socketpair "OK b'x'"
}

run_attempt "$@"
