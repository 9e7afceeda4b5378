#!/usr/bin/env bash
# attempt: new net, ipc, uts, pid, cgroup and time namespaces (`unshare -n`, …); allowed ones would gain nothing, but none is allowed without capabilities
# layer: dropped capabilities (no CAP_SYS_ADMIN in the sandbox's user namespace)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc unshare:net unshare:ipc unshare:uts unshare:pid unshare:cgroup unshare:time
  expect_rc 0
  local k
  for k in net ipc uts pid cgroup time; do expect_sc "unshare:$k" "EPERM (Operation not permitted)"; done
  inside_try 'try unshare -n ip link'
  expect_refused "unshare -n ip link" "Operation not permitted"
}

run_attempt "$@"
