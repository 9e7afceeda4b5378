#!/usr/bin/env bash
# attempt: change the network over netlink (`ip link add`, `ip addr add`, `ip route add`) to give the sandbox a way out
# layer: dropped capabilities (no CAP_NET_ADMIN) in a namespace with only a loopback
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  command -v ip >/dev/null || skip "iproute2 is not installed"
  inside_try 'try ip link add pe0 type dummy
try ip addr add 10.77.0.1/32 dev lo
try ip route add default dev lo
try ip link set lo down
echo "LINKS: $(ip -o link | cut -d: -f2 | tr -d " " | tr "\n" " ")"'
  expect_rc 0
  expect_refused "ip link add pe0 type dummy" "Operation not permitted"
  expect_refused "ip addr add 10.77.0.1/32 dev lo" "Operation not permitted"
  expect_refused "ip route add default dev lo" "Operation not permitted"
  expect_refused "ip link set lo down" "Operation not permitted"
  expect_lines "LINKS: lo "
}

run_attempt "$@"
