#!/usr/bin/env bash
# attempt: see and attach a System V shared-memory segment of the host (`ipcs`, `shmat` by id)
# layer: namespaces: a new IPC namespace
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  command -v ipcmk >/dev/null || skip "ipcmk is not installed"
  local id
  id="$(ipcmk -M 4096 2>/dev/null | grep -o '[0-9]*$')"
  [ -n "$id" ] || skip "cannot create a System V segment on the host"
  # shellcheck disable=SC2064 # the value now: the local is gone when the trap runs
  trap "ipcrm -m '$id' 2>/dev/null" EXIT
  capture sandbox -- "$PY" -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
r = libc.shmat($id, None, 0)
print('shmat: OK' if r not in (None, ctypes.c_void_p(-1).value) else 'shmat: ' + os.strerror(ctypes.get_errno()))
print(open('/proc/sysvipc/shm').read())"
  expect_rc 0
  expect_lines "shmat: Invalid argument"
  # The segment's id is not in the sandbox's list.
  if awk 'NR > 1 { print $2 }' <<<"$OUT" | grep -qx "$id"; then escaped "the host's segment $id is listed inside"; fi
}

run_attempt "$@"
