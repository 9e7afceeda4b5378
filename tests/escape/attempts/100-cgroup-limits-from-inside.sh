#!/usr/bin/env bash
# attempt: from inside, raise the sandbox's own limits (`pids.max`, `memory.limit_in_bytes`, `memory.oom_control`, `cpu.shares`) or move itself to the parent cgroup (`cgroup.procs`), to leave its resource limits behind
# layer: mount plan (the host's /sys read-only) and Landlock
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -c '
    for line in $(cat /proc/self/cgroup); do
      controllers=${line#*:}; path=${controllers#*:}; controllers=${controllers%%:*}
      for c in pids memory cpu; do
        case ",$controllers," in *",$c,"*) ;; *) continue ;; esac
        dir=/sys/fs/cgroup/$c$path
        for f in pids.max memory.limit_in_bytes memory.memsw.limit_in_bytes memory.oom_control \
                 cpu.shares ../cgroup.procs ../tasks; do
          [ -e "$dir/$f" ] || continue
          if { echo 999999999 >"$dir/$f"; } 2>/dev/null; then echo "DONE: $c/$f"
          else echo "REFUSED: $c/$f"; fi
        done
      done
    done'
  expect_rc 0
  refute "DONE:"
  # As root this machine always gives each command a cgroup: the files must have been there.
  if [ "$(id -u)" = 0 ]; then expect_out "REFUSED: pids/pids.max" "REFUSED: pids/../cgroup.procs"; fi
}

run_attempt "$@"
