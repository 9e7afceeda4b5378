#!/usr/bin/env bash
# The network benchmark's client (bench/network.sh): the same curl for every path, run
# directly in the benchmark network (path `direct`) or inside `pi-sandbox run` (the others).
# Every number comes from curl's own timers, so neither curl's nor the sandbox's start-up is
# in it.
#
# Usage: net_client.sh BIG_RUNS NEW_RUNS KEPT_RUNS PATH...
#   PATH: direct | connect | absolute | socks5h
# Prints one line per sample:
#   throughput PATH BYTES_PER_SECOND BYTES        GET /100m, one curl each
#   new PATH SECONDS                              GET /1k on a new connection, one curl each
#   kept PATH SECONDS CONNECTS                    GET /1k on a kept-alive connection
set -u
big_runs=$1 new_runs=$2 kept_runs=$3
shift 3
url=http://web.test

for path in "$@"; do
  case "$path" in
    direct) via=(--noproxy '*') ;;
    connect) via=(-x http://127.0.0.1:3128 --proxytunnel) ;;
    absolute) via=(-x http://127.0.0.1:3128) ;;
    socks5h) via=(-x socks5h://127.0.0.1:1080) ;;
    *) echo "unknown path $path" >&2; exit 2 ;;
  esac
  c=(curl -sS --fail "${via[@]}")
  for _ in $(seq "$big_runs"); do
    "${c[@]}" -o /dev/null -w "throughput $path %{speed_download} %{size_download}\n" "$url/100m"
  done
  # time_starttransfer: from the start of the transfer to the first byte of the response.
  # New connection: name lookup (direct only), connect, the proxy's handshake and decision,
  # its lookup and connect upstream, the request.
  for _ in $(seq "$new_runs"); do
    "${c[@]}" -o /dev/null -w "new $path %{time_starttransfer}\n" "$url/1k"
  done
  # Kept-alive: one curl, KEPT_RUNS+1 requests on one connection (num_connects 0 after the
  # first); the first, which opens the connection, is dropped by the report.
  [ "$kept_runs" -gt 0 ] || continue
  urls=()
  for _ in $(seq $((kept_runs + 1))); do urls+=(-o /dev/null "$url/1k"); done
  "${c[@]}" -w "kept $path %{time_starttransfer} %{num_connects}\n" "${urls[@]}"
done
