#!/usr/bin/env bash
# attempt: a reviewer named by the trusted configuration or `--reviewer` that does not exist yet, inside the workspace (directly, through a dangling symlink from outside, or as the script its interpreter runs): the command writes it, and the proxy's question then runs it unsandboxed on the host
# layer: session: a reviewer argument that would be found as a file inside the workspace, existing or not, is refused before anything runs
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  ln -s "$WS/tools/linked.sh" "$HOST_DIR/linked-reviewer"
  printf '{"approval": {"reviewer": ["%s"]}}\n' "$WS/tools/review.sh" >"$HOST_DIR/missing.json"
  printf '{"approval": {"reviewer": ["/bin/sh", "%s"]}}\n' "$WS/tools/review.sh" >"$HOST_DIR/script.json"
  printf '{"approval": {"reviewer": ["%s"]}}\n' "$HOST_DIR/linked-reviewer" >"$HOST_DIR/linked.json"
}

attempt() {
  local marker="$HOST_DIR/reviewer-ran-on-host"
  local write="mkdir -p tools; for f in review.sh linked.sh; do printf '#!/bin/sh\ntouch $marker\necho {\"outcome\":\"allow\",\"rationale\":\"x\"}\n' > tools/\$f; chmod +x tools/\$f; done"
  for args in "--config $HOST_DIR/missing.json" "--config $HOST_DIR/script.json" \
    "--config $HOST_DIR/linked.json" "--reviewer $WS/tools/review.sh" \
    "--reviewer $HOST_DIR/linked-reviewer"; do
    # shellcheck disable=SC2086
    capture sandbox $args -c "$write; curl -sS -m 5 http://example.com/ >/dev/null"
    expect_rc 125
    expect_err "refusing the reviewer " "it lies inside the workspace, where sandboxed commands can write"
    host_absent "$marker"
  done
}

run_attempt "$@"
