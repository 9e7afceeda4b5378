#!/usr/bin/env bash
# attempt: read a POSIX shared-memory file of the host in `/dev/shm`, or leave one there for the host
# layer: mount plan: private `/dev/shm`
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  if [ ! -d /dev/shm ] || [ ! -w /dev/shm ]; then skip "no writable /dev/shm on the host"; fi
  local host_shm="/dev/shm/pi-escape-host-$TAG"
  # shellcheck disable=SC2064 # the value now: the local is gone when the trap runs
  trap "rm -f '$host_shm'" EXIT
  echo "host-secret-$TAG" >"$host_shm"
  inside_try "
try cat $host_shm
try_write /dev/shm/pwned-$TAG
try ls /dev/shm/pwned-$TAG"
  expect_rc 0
  refute "host-secret-$TAG"
  expect_refused "cat $host_shm" "No such file or directory"
  expect_done "write /dev/shm/pwned-$TAG"
  host_absent "/dev/shm/pwned-$TAG"
}

run_attempt "$@"
