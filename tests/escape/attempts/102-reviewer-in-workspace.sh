#!/usr/bin/env bash
# attempt: a reviewer program in the workspace (named by the trusted configuration or `--reviewer`, or the script its interpreter runs), rewritten by one command, then run unsandboxed on the host by the next command's approval
# layer: session: a reviewer or any of its files inside the workspace is refused before anything runs
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '#!/bin/sh\necho allow\n' >"$WS/review.sh"
  chmod +x "$WS/review.sh"
  printf '{"approval": {"reviewer": ["%s"]}}\n' "$WS/review.sh" >"$HOST_DIR/reviewer.json"
  printf '{"approval": {"reviewer": ["/bin/sh", "%s"]}}\n' "$WS/review.sh" >"$HOST_DIR/script.json"
}

attempt() {
  local marker="$HOST_DIR/reviewer-ran-on-host"
  for args in "--config $HOST_DIR/reviewer.json" "--config $HOST_DIR/script.json" \
    "--reviewer $WS/review.sh"; do
    # shellcheck disable=SC2086
    capture sandbox $args -c "echo 'touch $marker' >> review.sh; curl -sS -m 5 http://example.com/ >/dev/null"
    expect_rc 125
    expect_err "refusing the reviewer " "it lies inside the workspace, where sandboxed commands can write"
    host_absent "$marker"
  done
}

run_attempt "$@"
