#!/usr/bin/env bash
# bench/unix.sh BINARY SCRATCH MODE: the cost of a brokered Unix-socket connect() (issue 14),
# against the same connect() on the host, in one invocation. Writes SCRATCH/unix.json:
# {"host_own": …, "sandbox_own": …, "host_server": …, "sandbox_allowed": …}, each
# {"n", "median_us", "p99_us"} from bench/unix_connect.py. MODE quick: a few connects only.
set -euo pipefail
sandbox="$1" scratch="$2" mode="$3"
here="$(cd "$(dirname "$0")" && pwd)"
n=2000
[ "$mode" = quick ] && n=50
dir="$scratch/unix"
rm -rf "$dir"
mkdir -p "$dir/ws"
py=/usr/bin/python3
cp "$here/unix_connect.py" "$dir/unix_connect.py"
"$py" "$dir/unix_connect.py" serve "$dir/server.sock" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -S "$dir/server.sock" ] && break; sleep 0.05; done
[ -S "$dir/server.sock" ] || { echo "bench/unix.sh: the test server did not start" >&2; exit 1; }
echo "{\"hostIPC\": {\"allowedSockets\": [\"$dir/server.sock\"]}}" >"$dir/config.json"
run() { "$sandbox" run --no-prompt --config "$dir/config.json" --cwd "$dir/ws" -- "$py" "$dir/unix_connect.py" "$@"; }
{
  printf '{"host_own": %s,\n' "$("$py" "$dir/unix_connect.py" own "$dir" "$n")"
  printf '"sandbox_own": %s,\n' "$(run own /tmp "$n")"
  printf '"host_server": %s,\n' "$("$py" "$dir/unix_connect.py" client "$dir/server.sock" "$n")"
  printf '"sandbox_allowed": %s}\n' "$(run client "$dir/server.sock" "$n")"
} >"$scratch/unix.json"
