#!/usr/bin/env bash
# attempt: overwrite the pi-sandbox binary through `/proc/<pid>/exe` of pid 1 or any visible process (the supervisor is not visible)
# layer: Landlock (ptrace scope), the read-only host view, ETXTBSY
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -- "$PY" -c '
import os
for p in sorted(os.listdir("/proc")):
    if not p.isdigit():
        continue
    try:
        fd = os.open("/proc/%s/exe" % p, os.O_WRONLY)
        os.close(fd)
        print("OPENED", p, os.readlink("/proc/%s/exe" % p))
    except OSError as e:
        print("pid", p, e.strerror)
print("ppid of pid 1:", open("/proc/1/status").read().split("PPid:")[1].split()[0])'
  expect_rc 0
  refute OPENED
  expect_out "pid 1 Permission denied" "ppid of pid 1: 0"
}

run_attempt "$@"
