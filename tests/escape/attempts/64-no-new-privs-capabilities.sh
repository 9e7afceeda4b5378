#!/usr/bin/env bash
# attempt: undo `no_new_privs`, raise a capability with `capset` or `capsh`, become uid 0 with `setuid(0)`
# layer: no_new_privs (cannot be cleared), empty bounding set, locked securebits
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc nnp-undo capset:21 capset:2
  expect_rc 0
  expect_sc nnp-undo "EINVAL (Invalid argument, no_new_privs still 1)"
  expect_sc capset:21 "EPERM (Operation not permitted)"
  expect_sc capset:2 "EPERM (Operation not permitted)"
  if [ "$(id -u)" != 0 ]; then
    inside_sc setuid:0
    # EINVAL: uid 0 is not even mapped in the sandbox's user namespace.
    expect_sc setuid:0 "EPERM (Operation not permitted)" "EINVAL (Invalid argument)"
  fi
  if command -v capsh >/dev/null; then
    inside_try 'try capsh --caps=cap_sys_admin+eip -- -c true
grep -E "^(CapBnd|CapAmb|CapInh)" /proc/self/status'
    expect_refused "capsh --caps=cap_sys_admin+eip -- -c true" "Operation not permitted" \
      "capabilities" "Unable"
    expect_lines "CapBnd:	0000000000000000" "CapAmb:	0000000000000000"
  fi
}

run_attempt "$@"
