#!/usr/bin/env bash
# The approvals part of bench/run (issue 13, "A benchmark row"): one `npm install` of a
# package with ten dependencies from a local registry stand-in, through the per-command proxy,
# in `pi-sandbox serve` with a scripted host that answers every question "Allow <host:port>
# for the rest of this command". Counts the questions (the target is exactly one) and times
# the install. report.py turns the result into the "npm install through approvals" section.
#
# Usage: bench/npm.sh PI_SANDBOX RESULTS_DIR quick|full
# Writes RESULTS_DIR/npm.json: {"status": "ok" or "not measured: <why>", "runs": [one
# npm_host.py result per run], "requests": [registry requests per run], "direct": [seconds of
# the same install without pi-sandbox, one per run], "npm": version, "node": version}.
#
# The network is the integration tests' (tests/integration/net_setup.sh): the registry
# (bench/npm_registry.py) listens on 203.0.113.2:80 in a network namespace of its own and is
# named registry.test in the holder's /etc/hosts; `pi-sandbox serve` joins the holder's
# namespaces with nsenter. registry.test is in no allowedDomains: every connection is a
# question unless an answer covers it. Each run gets a new serve, workspace and npm cache, and
# is preceded by the same install without pi-sandbox (in the holder's namespaces, straight to
# the registry), for comparison.
set -euo pipefail
sandbox=$1 results=$2 mode=$3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
runs=5
[ "$mode" = quick ] && runs=1

net="$(mktemp -d "${TMPDIR:-/tmp}/pi-sandbox-bench-npm.XXXXXX")"
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
  python3 -c 'import json, sys; print(json.dumps({"status": "not measured: " + sys.argv[1]}))' \
    "$*" >"$results/npm.json"
  echo "bench/npm.sh: not measured: $*" >&2
  exit 0
}

for tool in npm node ip nsenter unshare setsid; do
  command -v "$tool" >/dev/null || not_measured "$tool is not installed"
done

mkdir "$net/home"
cp "$here/npm_registry.py" "$here/../tests/integration/net_setup.sh" "$net/"
python3 "$net/npm_registry.py" make "$net/registry" http://registry.test/
echo "203.0.113.2 registry.test" >"$net/hosts"
# Trusted configuration, outside the workspace: registry.test is not allowed, so it is asked.
echo '{}' >"$net/config.json"

setsid unshare --user --map-current-user --keep-caps --net --mount --propagation private \
  bash "$net/net_setup.sh" "$net" /usr/bin/python3 "$net/npm_registry.py" serve \
  "$net/registry" 203.0.113.2 80 "$net/servers.ready" >"$net/holder.log" 2>&1 &
holder=$!
for _ in $(seq 500); do
  [ -e "$net/ready" ] && break
  kill -0 "$holder" 2>/dev/null || break
  sleep 0.02
done
[ -e "$net/ready" ] || not_measured "could not build the private network" \
  "(user+network namespaces, veth): $(tail -n 1 "$net/holder.log")"

in_net=(nsenter --preserve-credentials -U -n -m -t "$holder" --)
command="npm install --registry=http://registry.test/ --cache=.npm-cache --prefer-online"
command+=" --no-audit --no-fund --no-update-notifier --loglevel=error pisb-app"
: >"$net/runs.jsonl"
: >"$net/requests.txt"
: >"$net/direct.txt"
for run in $(seq "$runs"); do
  mkdir "$net/direct-$run"
  # nsenter -m starts in the root directory: cd first. Timed like npm_host.py's runs.
  python3 -c 'import subprocess, sys, time
start = time.monotonic()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(round(time.monotonic() - start, 3))' \
    "${in_net[@]}" bash -c "cd '$net/direct-$run' && HOME='$net/home' $command" \
    >>"$net/direct.txt" || not_measured "npm install without pi-sandbox failed in run $run"
  ws="$net/ws-$run"
  mkdir "$ws"
  : >"$net/registry.log"
  # The audit log and whatever npm keeps in HOME go to a scratch home.
  HOME="$net/home" "${in_net[@]}" /usr/bin/python3 "$here/npm_host.py" "$ws" "$command" 300 -- \
    "$sandbox" serve --config "$net/config.json" >>"$net/runs.jsonl" ||
    not_measured "the scripted host failed in run $run"
  installed=$(find "$ws/node_modules" -maxdepth 1 -name 'pisb-*' 2>/dev/null | wc -l)
  [ "$installed" -eq 11 ] ||
    not_measured "npm install did not install the 11 packages in run $run: $(tail -n 1 "$net/runs.jsonl")"
  wc -l <"$net/registry.log" >>"$net/requests.txt"
done

python3 - "$net/runs.jsonl" "$net/requests.txt" "$net/direct.txt" "$(npm --version)" \
  "$(node --version)" >"$results/npm.json" <<'EOF'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
requests = [int(line) for line in open(sys.argv[2]) if line.strip()]
direct = [float(line) for line in open(sys.argv[3]) if line.strip()]
print(json.dumps({"status": "ok", "runs": runs, "requests": requests, "direct": direct,
                  "npm": sys.argv[4], "node": sys.argv[5]}))
EOF
