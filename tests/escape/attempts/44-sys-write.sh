#!/usr/bin/env bash
# attempt: open writable files of `/sys` for writing (`/sys/kernel/…`, cgroup `cgroup.procs` to leave the sandbox's cgroup, `/sys/class/net/*`, `/sys/power/state`; opened, never written)
# layer: mount plan (the host's /sys read-only) and Landlock
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local specs=() f
  for f in /sys/kernel/profiling /sys/kernel/rcu_expedited /sys/kernel/uevent_helper \
    /sys/kernel/mm/transparent_hugepage/enabled /sys/power/state /sys/class/net/lo/mtu \
    /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/unified/cgroup.procs /sys/fs/cgroup/pids/tasks \
    /sys/module/printk/parameters/time; do
    [ -e "$f" ] && specs+=("open-write:$f")
  done
  [ ${#specs[@]} -gt 0 ] || skip "none of the probed /sys files exists here"
  inside_sc "${specs[@]}"
  expect_rc 0
  for f in "${specs[@]}"; do expect_sc "$f" EACCES EROFS EPERM ENOENT; done
}

run_attempt "$@"
