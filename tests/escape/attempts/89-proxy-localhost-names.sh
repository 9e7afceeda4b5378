#!/usr/bin/env bash
# attempt: reach the host server through the proxy by local names (`localhost`, `LOCALHOST.`, `ip6-localhost` and the names /etc/hosts maps to 127.0.0.1)
# layer: proxy: single labels refused, names that resolve to loopback refused after the lookup
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  host_listen http 127.0.0.1
  local names
  # Every name the host's /etc/hosts maps to a loopback address, dotted or not.
  names="$(awk '$1 ~ /^(127\.|::1$)/ { for (i = 2; i <= NF; i++) print $i }' /etc/hosts | sort -u | head -8)"
  # shellcheck disable=SC2086
  proxy_refuses localhost LOCALHOST. ip6-localhost $names
}

run_attempt "$@"
