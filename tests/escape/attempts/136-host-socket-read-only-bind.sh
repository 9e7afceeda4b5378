#!/usr/bin/env bash
# attempt: connect to a host Unix socket whose file the sandbox sees through the read-only view of the host (like /run/docker.sock)
# layer: the Unix-socket broker (a socket the sandbox did not bind is the host's: refused without an approval, EACCES)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen unix "$HOST_DIR/host.sock"
  inside_sc "unixconnect:$HOST_DIR/host.sock"
  expect_rc 0
  expect_sc "unixconnect:$HOST_DIR/host.sock" "EACCES (Permission denied)" "EPERM (Operation not permitted)"
  listen_saw_nothing
}

run_attempt "$@"
