#!/usr/bin/env bash
# attempt: `pi-sandbox proxy-connect` (the SSH ProxyCommand available inside) aimed at the host's loopback by literal and local name
# layer: proxy (the same SOCKS5 checks as every other path)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen tcp 127.0.0.1
  local p="$LISTEN_PORT" h
  capture sandbox -- /bin/bash -c 'for h in 127.0.0.1 2130706433 localhost ::1; do
  echo hello | timeout 10 "$0" proxy-connect "$h" '"$p"' >/dev/null 2>&1
  echo "$h => $?"
done' "$PI_BIN"
  expect_rc 0
  for h in 127.0.0.1 2130706433 localhost ::1; do
    grep -q "^$h => [1-9]" <<<"$OUT" || { show; escaped "proxy-connect $h succeeded"; }
  done
  grep -q "^[^ ]* => 124" <<<"$OUT" && { show; escaped "proxy-connect hung (a tunnel opened?)"; }
  listen_saw_nothing
}

run_attempt "$@"
