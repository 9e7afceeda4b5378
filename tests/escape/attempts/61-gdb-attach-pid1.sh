#!/usr/bin/env bash
# attempt: `gdb -p 1` to attach to the sandbox's init and call `system()` in it (ptrace by hand where gdb is missing)
# layer: Landlock (ptrace scope) and dropped capabilities
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  if ! command -v gdb >/dev/null; then
    # No gdb here: the same attach, by hand.
    inside_sc ptrace-attach:1
    expect_sc ptrace-attach:1 "EPERM (Operation not permitted)"
    echo "gdb is not installed: attached with ptrace(2) directly" >&2
    return 0
  fi
  capture sandbox -- gdb -nx -batch -p 1 -ex "call (int)system(\"touch $WS/gdb-pwned-$TAG\")"
  expect_err "ptrace: Operation not permitted"
  refute "\$1 = 0"
  host_absent "$WS/gdb-pwned-$TAG"
}

run_attempt "$@"
