#!/usr/bin/env bash
# attempt: read the host's `/tmp` and `/var/tmp` (a file another program left there), or leave a file in them for the host
# layer: mount plan: private tmpfs `/tmp` and `/var/tmp`
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local host_tmp="/tmp/pi-escape-host-$TAG" host_vartmp="/var/tmp/pi-escape-host-$TAG"
  local host_dir="/tmp/pi-escape-hostdir-$TAG"
  # shellcheck disable=SC2064 # the values now: the locals are gone when the trap runs
  trap "rm -rf '$host_tmp' '$host_vartmp' '$host_dir'" EXIT
  mkdir -p "$host_dir"
  echo "host-secret-$TAG" >"$host_tmp"
  echo "host-secret-$TAG" >"$host_vartmp" 2>/dev/null || host_vartmp=/var/tmp/none
  inside_try "
try cat $host_tmp
try cat $host_vartmp
try ls $host_dir
try_write /tmp/pwned-$TAG
try_write /var/tmp/pwned-$TAG"
  expect_rc 0
  refute "host-secret-$TAG"
  expect_refused "cat $host_tmp" "No such file or directory"
  expect_refused "cat $host_vartmp" "No such file or directory"
  expect_refused "ls $host_dir" "No such file or directory"
  expect_done "write /tmp/pwned-$TAG"
  expect_done "write /var/tmp/pwned-$TAG"
  host_absent "/tmp/pwned-$TAG" "/var/tmp/pwned-$TAG"
}

run_attempt "$@"
