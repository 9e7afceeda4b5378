#!/usr/bin/env bash
# attempt: rewrite the address from another thread while connect() to the sandbox's own socket waits for the broker, so that the kernel connects to a host socket checked as the own one
# layer: the Unix-socket broker (the call is made on the supervisor's copy of the address; the stopped call never continues)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen unix "$HOST_DIR/h.sock"
  inside_sc "connectrace:/tmp/o.sock,$HOST_DIR/h.sock,400"
  expect_rc 0
  expect_sc "connectrace:/tmp/o.sock,$HOST_DIR/h.sock,400" "OK own" "EPERM (Operation not permitted)"
  listen_saw_nothing
}

run_attempt "$@"
