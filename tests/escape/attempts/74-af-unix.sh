#!/usr/bin/env bash
# attempt: create Unix-domain sockets (stream and datagram) to reach host services such as ssh-agent, docker, tmux, D-Bus
# layer: seccomp (`socket(AF_UNIX)` → EPERM; `socketpair` still works)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc socket:unix socket:unix-dgram socketpair
  expect_rc 0
  expect_sc socket:unix "EPERM (Operation not permitted)"
  expect_sc socket:unix-dgram "EPERM (Operation not permitted)"
  expect_sc socketpair "OK b'x'"
}

run_attempt "$@"
