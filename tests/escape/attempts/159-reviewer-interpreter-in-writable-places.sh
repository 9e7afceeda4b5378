#!/usr/bin/env bash
# attempt: a reviewer outside the workspace whose interpreter a command can still replace: `#!/usr/bin/env -S python3 -u` with a workspace `.venv/bin` first on PATH, a `#!` line naming an interpreter in a `filesystem.additionalAllowWrite` directory, or the script it runs kept there; the command rewrites it and the next review runs it on the host
# layer: session: the reviewer's environment drops PATH entries in writable places (`env -S` included), and a reviewer whose program, files or `#!` interpreter lie in any writable place is refused before anything runs
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/.venv/bin" "$HOST_DIR/extra"
  cp /bin/sh "$HOST_DIR/extra/sh"
  printf '{"filesystem": {"additionalAllowWrite": ["%s"]}}\n' "$HOST_DIR/extra" >"$HOST_DIR/config.json"
  printf '#!/usr/bin/env -S python3 -u\nimport json, sys\nsys.stdin.read()\nprint(json.dumps({"outcome": "deny", "risk_level": "low", "rationale": "the host python3 reviewed it"}))\n' >"$HOST_DIR/review-split"
  printf '#!%s\ncat >/dev/null\necho "{\\"outcome\\":\\"deny\\",\\"risk_level\\":\\"low\\",\\"rationale\\":\\"x\\"}"\n' "$HOST_DIR/extra/sh" >"$HOST_DIR/review-shebang"
  printf 'cat >/dev/null\necho "{\\"outcome\\":\\"deny\\",\\"risk_level\\":\\"low\\",\\"rationale\\":\\"x\\"}"\n' >"$HOST_DIR/extra/review.sh"
  printf '{"filesystem": {"additionalAllowWrite": ["%s"]}, "approval": {"reviewer": ["/bin/sh", "%s"]}}\n' \
    "$HOST_DIR/extra" "$HOST_DIR/extra/review.sh" >"$HOST_DIR/script.json"
  chmod +x "$HOST_DIR/review-split" "$HOST_DIR/review-shebang"
}

attempt() {
  local marker="$HOST_DIR/planted-ran-on-host"
  local payload="#!/bin/sh\ntouch $marker\necho {\\\"outcome\\\":\\\"allow\\\",\\\"risk_level\\\":\\\"low\\\",\\\"rationale\\\":\\\"planted\\\"}\n"
  local request="curl -sS -m 10 -o /dev/null http://example.com/; echo curl=\$?"
  # A parent proxy: the question comes before any lookup (no DNS is needed on the machine).
  capture env PATH="$WS/.venv/bin:$PATH" http_proxy=http://127.0.0.1:9 HOME="$FAKE_HOME" \
    "$PI_BIN" run --no-prompt --cwd "$WS" --reviewer "$HOST_DIR/review-split" \
    -c "printf '$payload' > .venv/bin/python3; chmod +x .venv/bin/python3; $request"
  host_absent "$marker"
  expect_rc 0
  expect_out "curl=0"
  expect_err "pi-sandbox: network: refused example.com:80: the host python3 reviewed it"
  for args in "--reviewer $HOST_DIR/review-shebang --config $HOST_DIR/config.json" \
    "--config $HOST_DIR/script.json"; do
    # shellcheck disable=SC2086
    capture env http_proxy=http://127.0.0.1:9 HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt \
      --cwd "$WS" $args -c "printf '$payload' > $HOST_DIR/extra/sh; cp $HOST_DIR/extra/sh $HOST_DIR/extra/review.sh; $request"
    host_absent "$marker"
    expect_rc 125
    expect_err "refusing the reviewer "
    expect_err "lies in $HOST_DIR/extra, where sandboxed commands can write"
  done
}

run_attempt "$@"
