#!/usr/bin/env bash
# attempt: reach a host HTTP server on 127.0.0.1 through the proxy by a whole-number address (`2130706433`, `0x7f000001`, `017700000001`), CONNECT, absolute-form and curl
# layer: proxy: every IP literal spelling refused before any lookup; the private network namespace leaves no other way
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen http 127.0.0.1
  proxy_refuses '2130706433' '0x7f000001' '017700000001'
}

run_attempt "$@"
