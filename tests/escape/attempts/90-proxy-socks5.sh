#!/usr/bin/env bash
# attempt: reach the host server through the SOCKS5 listener (`$ALL_PROXY`): by name with literal spellings (`127.1`, `2130706433`, `localhost`, `::1`), by IPv4 and IPv6 address types, and with `curl --socks5-hostname` / `--socks5`
# layer: proxy (SOCKS5: IP literals and address types refused, reply 0x02)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen http 127.0.0.1
  local p="$LISTEN_PORT"
  capture sandbox -- /bin/bash -c '"$0" -c "$1" "${@:2}"
echo "curl-h => $(curl -sS --noproxy "" -o /dev/null -w "%{http_code}" --socks5-hostname "${ALL_PROXY#socks5h://}" "http://127.1:'"$p"'/" 2>&1)"
echo "curl-4 => $(curl -sS --noproxy "" -o /dev/null -w "%{http_code}" --socks5 "${ALL_PROXY#socks5h://}" "http://127.0.0.1:'"$p"'/" 2>&1)"' \
    "$PY" "$(pysrc proxy)" "socks5h 127.1 $p" "socks5h 2130706433 $p" "socks5h localhost $p" \
    "socks5h ::1 $p" "socks5h 127.0.0.1 $p" "socks5-ip4 127.0.0.1 $p" "socks5-ip6 ::1 $p" \
    "socks5-ip6 ::ffff:127.0.0.1 $p"
  expect_rc 0
  refute REACHED
  local s
  for s in "socks5h 127.1" "socks5h 2130706433" "socks5h localhost" "socks5h ::1" \
    "socks5h 127.0.0.1" "socks5-ip4 127.0.0.1" "socks5-ip6 ::1" "socks5-ip6 ::ffff:127.0.0.1"; do
    expect_lines "$s $p => socks reply 2"
  done
  grep -q '^curl-h => .*SOCKS.*000$' <<<"$(tr '\n' ' ' <<<"$OUT" | sed 's/ curl-/\ncurl-/g')" ||
    { show; escaped "curl --socks5-hostname was not refused by the SOCKS5 proxy"; }
  grep -q '^curl-4 => .*SOCKS.*000' <<<"$(tr '\n' ' ' <<<"$OUT" | sed 's/ curl-/\ncurl-/g')" ||
    { show; escaped "curl --socks5 was not refused by the SOCKS5 proxy"; }
  listen_saw_nothing
}

run_attempt "$@"
