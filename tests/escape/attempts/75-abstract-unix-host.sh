#!/usr/bin/env bash
# attempt: connect to an abstract Unix socket that a host program listens on (abstract names bypass the file system)
# layer: seccomp (no AF_UNIX socket) and the network namespace (abstract names are per namespace)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen abstract "pi-escape-$TAG"
  inside_sc "abstract:pi-escape-$TAG"
  expect_rc 0
  expect_sc "abstract:pi-escape-$TAG" "EPERM (Operation not permitted)"
  listen_saw_nothing
}

run_attempt "$@"
