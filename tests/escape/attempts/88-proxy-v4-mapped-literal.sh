#!/usr/bin/env bash
# attempt: reach the host server through the proxy by IPv4-mapped, v4-compatible and NAT64 spellings of 127.0.0.1 (`[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`, `[::127.0.0.1]`, `[64:ff9b::7f00:1]`)
# layer: proxy: every IP literal spelling refused before any lookup; the private network namespace leaves no other way
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen http 127.0.0.1
  proxy_refuses '[::ffff:127.0.0.1]' '[::ffff:7f00:1]' '[::127.0.0.1]' '[64:ff9b::7f00:1]'
}

run_attempt "$@"
