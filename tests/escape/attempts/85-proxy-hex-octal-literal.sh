#!/usr/bin/env bash
# attempt: reach the host server through the proxy by hex and octal dotted spellings (`0x7f.1`, `0x7F.0.0.1`, `0177.0.0.1`, `127.000.000.001`)
# layer: proxy: every IP literal spelling refused before any lookup; the private network namespace leaves no other way
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen http 127.0.0.1
  proxy_refuses '0x7f.1' '0x7F.0.0.1' '0177.0.0.1' '127.000.000.001'
}

run_attempt "$@"
