#!/usr/bin/env bash
# attempt: open kernel tunables for writing: `/proc/sys/kernel/core_pattern` (a pipe run as root on the next crash), `modprobe`, `poweroff_cmd`, `vm/drop_caches` (opened, never written)
# layer: Landlock (no write access outside the allowed trees) and the read-only host view
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local specs=() f
  for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/kernel/poweroff_cmd \
    /proc/sys/vm/drop_caches /proc/sys/kernel/sysrq /proc/sys/fs/suid_dumpable; do
    [ -e "$f" ] && specs+=("open-write:$f")
  done
  local before
  before="$(cat /proc/sys/kernel/core_pattern)"
  inside_sc "${specs[@]}"
  expect_rc 0
  for f in "${specs[@]}"; do expect_sc "$f" EACCES EROFS EPERM; done
  [ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ] || escaped "core_pattern changed"
}

run_attempt "$@"
