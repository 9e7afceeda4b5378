#!/usr/bin/env bash
# attempt: open `/proc/sysrq-trigger` for writing (reboot, crash; opened, never written) and the kernel's message buffer `/dev/kmsg`, `/proc/kmsg`
# layer: Landlock and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local specs=() f
  for f in /proc/sysrq-trigger /proc/kmsg /proc/kcore /proc/sys/kernel/ns_last_pid /dev/kmsg; do
    [ -e "$f" ] && specs+=("open-write:$f")
  done
  inside_sc "${specs[@]}"
  expect_rc 0
  for f in "${specs[@]}"; do expect_sc "$f" EACCES EROFS EPERM ENOENT; done
  [ -e /proc/sysrq-trigger ] || echo "note: this kernel has no /proc/sysrq-trigger" >&2
}

run_attempt "$@"
