#!/usr/bin/env bash
# attempt: connect to an abstract Unix socket that a host program listens on (abstract names bypass the file system)
# layer: the network namespace (abstract names are per namespace; the broker lets the helper connect inside it) and Landlock's abstract-socket scope
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen abstract "pi-escape-$TAG"
  inside_sc "abstract:pi-escape-$TAG"
  expect_rc 0
  expect_sc "abstract:pi-escape-$TAG" "ECONNREFUSED (Connection refused)" "EPERM (Operation not permitted)"
  listen_saw_nothing
}

run_attempt "$@"
