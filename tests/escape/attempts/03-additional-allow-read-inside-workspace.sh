#!/usr/bin/env bash
# attempt: a trusted configuration whose `filesystem.additionalAllowRead` names `<ws>/.git` lifts the protection of `.git/hooks`
# layer: mount plan: a protected path stays read-only whatever else the plan exposes, in any bind order
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '{"filesystem": {"additionalAllowRead": ["%s/.git"]}}\n' "$WS" >"$HOST_DIR/config.json"
}

attempt() {
  capture sandbox --config "$HOST_DIR/config.json" -c "$TRY_PRELUDE"'
try_write .git/hooks/pre-commit
try mv .git/hooks .git/h2'
  expect_rc 0
  expect_refused "write .git/hooks/pre-commit" "Read-only file system"
  expect_refused "mv .git/hooks .git/h2" "Device or resource busy" "Read-only file system"
  host_absent "$WS/.git/hooks/pre-commit" "$WS/.git/h2"
}

run_attempt "$@"
