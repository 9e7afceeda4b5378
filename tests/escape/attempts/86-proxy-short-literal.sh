#!/usr/bin/env bash
# attempt: reach the host server through the proxy by short and plain dotted spellings (`127.1`, `127.0.1`, `127.0.0.1`, `127.0.0.1.`)
# layer: proxy: every IP literal spelling refused before any lookup; the private network namespace leaves no other way
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen http 127.0.0.1
  proxy_refuses '127.1' '127.0.1' '127.0.0.1' '127.0.0.1.'
}

run_attempt "$@"
