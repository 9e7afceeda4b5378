#!/usr/bin/env bash
# The network part of bench/run (issue 5, "Benchmark"): 100 MiB and the first byte of 1 KiB,
# direct and through the per-command proxy (CONNECT, absolute-form, SOCKS5), plus the
# supervisor's PSS while transfers run. Called by bench/run; report.py turns the results
# into the "Network" section of docs/benchmarks.md.
#
# Usage: bench/network.sh PI_SANDBOX RESULTS_DIR quick|full
# Writes into RESULTS_DIR: network-status ("ok" or why nothing was measured),
# network-params.json, network-samples.txt (net_client.sh's lines), network-pss.jsonl
# (net_pss.py's samples) and network-load.txt (/proc/loadavg before and after).
#
# The network is private and built like tests/integration/network_test.cpp's: a holder
# process in new user, network and mount namespaces (so this works unprivileged too) with a
# veth pair to a second network namespace where net_servers.py listens on 203.0.113.2, and
# /etc/hosts bind-mounted with `web.test`. The direct client runs in the holder's
# namespaces; every `pi-sandbox run` joins them with nsenter, so its supervisor resolves
# web.test and routes to the server the same way. Each round runs the direct client and a
# `pi-sandbox run` for each proxied path (orders rotate from round to round), so background
# load falls on every path alike.
set -euo pipefail
sandbox=$1 results=$2 mode=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if [ "$mode" = quick ]; then
  rounds=2 big=1 new=5 kept=10
else
  rounds=12 big=2 new=20 kept=30
fi
printf '{"rounds": %d, "throughput_runs": %d, "new_runs": %d, "kept_runs": %d}\n' \
  "$rounds" "$((rounds * big))" "$((rounds * new))" "$((rounds * kept))" \
  >"$results/network-params.json"
: >"$results/network-samples.txt"
: >"$results/network-pss.jsonl"

net="$(mktemp -d "${TMPDIR:-/tmp}/pi-sandbox-bench-net.XXXXXX")"
holder=
cleanup() {
  if [ -n "$holder" ]; then
    kill -KILL -- "-$holder" 2>/dev/null || true
    wait "$holder" 2>/dev/null || true
  fi
  rm -rf "$net"
}
trap cleanup EXIT

not_measured() {
  echo "not measured: $*" >"$results/network-status"
  echo "bench/network.sh: not measured: $*" >&2
  exit 0
}

for tool in curl ip nsenter unshare setsid; do
  command -v "$tool" >/dev/null || not_measured "$tool is not installed"
done

mkdir "$net/ws"
cp "$here/net_servers.py" "$here/../tests/integration/net_setup.sh" "$net/"
cp "$here/net_client.sh" "$net/ws/"
echo "203.0.113.2 web.test" >"$net/hosts"
# Trusted configuration, outside the workspace. Allowed without asking: no approval in the
# measured path (an allowed domain is still resolved and its addresses checked).
echo '{"network": {"allowedDomains": ["web.test"]}}' >"$net/config.json"

setsid unshare --user --map-current-user --keep-caps --net --mount --propagation private \
  bash "$net/net_setup.sh" "$net" /usr/bin/python3 "$net/net_servers.py" 203.0.113.2 80 \
  "$net/servers.ready" >"$net/holder.log" 2>&1 &
holder=$!
for _ in $(seq 500); do
  [ -e "$net/ready" ] && break
  kill -0 "$holder" 2>/dev/null || break
  sleep 0.02
done
[ -e "$net/ready" ] || not_measured "could not build the private network" \
  "(user+network namespaces, veth): $(tail -n 1 "$net/holder.log")"

in_net=(nsenter --preserve-credentials -U -n -m -t "$holder" --)

# direct KIND: the client in the benchmark network, no sandbox.
direct() {
  local counts=("$big" 0 0)
  [ "$1" = throughput ] || counts=(0 "$new" "$kept")
  # nsenter -m starts in the root directory: the direct client gets its absolute path.
  "${in_net[@]}" bash "$net/ws/net_client.sh" "${counts[@]}" direct \
    >>"$results/network-samples.txt"
}

# sandboxed KIND PATH...: one `pi-sandbox run` of the client, its supervisor sampled from
# outside. The command marks the start and the end of its measurements (.start, .end in
# the workspace) with a pause on each side, so that net_pss.py has samples before and after:
# the report takes the supervisor's CPU time between them, without its start-up.
sandboxed() {
  local kind=$1 pid sampler status=0
  shift
  local counts=("$big" 0 0)
  [ "$kind" = throughput ] || counts=(0 "$new" "$kept")
  rm -f "$net/ws/.start" "$net/ws/.end"
  "${in_net[@]}" "$sandbox" run --cwd "$net/ws" --config "$net/config.json" --no-prompt \
    -c "sleep 0.15; touch .start; bash net_client.sh ${counts[*]} $*; touch .end; sleep 0.15" \
    >"$net/out" 2>"$net/err" &
  pid=$!
  /usr/bin/python3 "$here/net_pss.py" "$pid" 0.05 "$round $kind $*" "$net/ws" \
    >>"$results/network-pss.jsonl" &
  sampler=$!
  wait "$pid" || status=$?
  wait "$sampler" || true
  if [ "$status" -ne 0 ]; then
    echo "bench/network.sh: pi-sandbox run failed ($status):" >&2
    cat "$net/err" >&2
    exit 1
  fi
  cat "$net/out" >>"$results/network-samples.txt"
}

cat /proc/loadavg >"$results/network-load.txt"
paths=(connect absolute socks5h)
for round in $(seq "$rounds"); do
  shift_by=$(((round - 1) % 3))
  order=("${paths[@]:$shift_by}" "${paths[@]:0:$shift_by}")
  # 100 MiB: one `pi-sandbox run` per proxied path, so that the supervisor's CPU time is that
  # path's; the direct client before or after them, alternately.
  [ $((round % 2)) -eq 0 ] || direct throughput
  for path in "${order[@]}"; do sandboxed throughput "$path"; done
  [ $((round % 2)) -eq 1 ] || direct throughput
  # First bytes: the three proxied paths in one run.
  [ $((round % 2)) -eq 0 ] || direct first-byte
  sandboxed first-byte "${order[@]}"
  [ $((round % 2)) -eq 1 ] || direct first-byte
done
cat /proc/loadavg >>"$results/network-load.txt"
echo ok >"$results/network-status"
