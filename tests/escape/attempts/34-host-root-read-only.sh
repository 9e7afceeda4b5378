#!/usr/bin/env bash
# attempt: write the host outside the workspace: `/etc/ld.so.preload`, `/etc/passwd`, `/etc/cron.d/`, `/usr/local/bin/`, `/var/spool/`, another user's home, the pi-sandbox binary
# layer: mount plan: the host's root bound read-only (and Landlock: writes only beneath the workspace, private temp dirs, the home layer, /dev)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local other=/home/pisandbox-test
  [ "$(id -un)" = pisandbox-test ] && other=/root
  inside_try "
try_write /etc/ld.so.preload
try_write /etc/passwd
try_write /etc/cron.d/pi-escape-$TAG
try_write /usr/local/bin/pi-escape-$TAG
try_write /var/spool/pi-escape-$TAG
try_write $other/.bashrc
try_write $PI_BIN
try touch /etc/hostname
try mkdir /opt/pi-escape-$TAG"
  expect_rc 0
  local f
  for f in /etc/ld.so.preload /etc/passwd /etc/cron.d/pi-escape-$TAG /usr/local/bin/pi-escape-$TAG \
    /var/spool/pi-escape-$TAG $PI_BIN; do
    expect_refused "write $f" "Read-only file system" "Permission denied" "Text file busy"
  done
  expect_refused "write $other/.bashrc" "Read-only file system" "Permission denied" \
    "No such file or directory"
  expect_refused "touch /etc/hostname" "Read-only file system" "Permission denied"
  expect_refused "mkdir /opt/pi-escape-$TAG" "Read-only file system" "Permission denied"
  host_absent /etc/ld.so.preload "/etc/cron.d/pi-escape-$TAG" "/usr/local/bin/pi-escape-$TAG" \
    "/var/spool/pi-escape-$TAG" "/opt/pi-escape-$TAG"
}

run_attempt "$@"
