#!/usr/bin/env bash
# attempt: a request to `pi-sandbox serve` gives its command `LD_PRELOAD` naming a library in the workspace (one a command wrote); serve's worker, which runs on the host until it sandboxes, is started with that environment and loads the library itself, outside the sandbox
# layer: serve: the worker process starts without the loader's variables (`LD_*`, `GCONV_PATH`, `LOCPATH`); the request's `env` reaches the command inside through the request line
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  command -v cc >/dev/null || return 0
  mkdir -p "$WS/.cache"
  # The library a command wrote: outside the sandbox (no PI_SANDBOX=1) it leaves a marker.
  printf '#include <fcntl.h>\n#include <stdlib.h>\n#include <unistd.h>\n__attribute__((constructor)) static void hook(void) {\n  if (getenv("PI_SANDBOX") == NULL) close(open("%s", O_WRONLY | O_CREAT, 0644));\n}\n' \
    "$HOST_DIR/library-loaded-on-host" >"$HOST_DIR/hook.c"
  cc -shared -fPIC -o "$WS/.cache/libhook.so" "$HOST_DIR/hook.c"
}

attempt() {
  command -v cc >/dev/null || skip "no C compiler to build the library"
  cd "$WS" || exit 2
  local env
  env=$(printf '{"HOME": "%s", "PATH": "/usr/bin:/bin", "LD_PRELOAD": "%s"}' "$FAKE_HOME" "$WS/.cache/libhook.so")
  capture env HOME="$FAKE_HOME" "$PY" -c "$(pysrc serve_exec)" "$PI_BIN" "$WS" "$env" 'echo "inside LD_PRELOAD=$LD_PRELOAD"'
  host_absent "$HOST_DIR/library-loaded-on-host"
  expect_rc 0
  # The command inside still gets the variable it was given.
  expect_out "output: inside LD_PRELOAD=$WS/.cache/libhook.so" '"exit_code": 0'
}

run_attempt "$@"
