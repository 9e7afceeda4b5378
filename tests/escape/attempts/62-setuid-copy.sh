#!/usr/bin/env bash
# attempt: a setuid copy (setuid-root when run as root) and a file-capability copy of `cat` made in the workspace, run inside to gain capabilities
# layer: no_new_privs, nosuid mounts, locked securebits
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  cp /bin/cat "$WS/suid-cat"
  chmod 4755 "$WS/suid-cat"
  if [ "$(id -u)" = 0 ] && command -v setcap >/dev/null; then
    cp /bin/cat "$WS/cap-cat"
    setcap cap_sys_admin,cap_dac_override+ep "$WS/cap-cat"
  fi
}

attempt() {
  [ -u "$WS/suid-cat" ] || skip "the setuid bit did not stick on the host"
  capture sandbox -c './suid-cat /proc/self/status | grep -E "^(Uid|CapEff|CapPrm)"
if [ -e ./cap-cat ]; then ./cap-cat /proc/self/status | grep -E "^Cap(Eff|Prm)" | sed "s/^/file-cap /"; fi'
  expect_rc 0
  expect_lines "CapEff:	0000000000000000" "CapPrm:	0000000000000000"
  if [ -e "$WS/cap-cat" ]; then
    expect_lines "file-cap CapEff:	0000000000000000" "file-cap CapPrm:	0000000000000000"
  fi
}

run_attempt "$@"
