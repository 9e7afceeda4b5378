#!/usr/bin/env bash
# attempt: a setuid program in every other place the command writes that the host keeps (the home as the workspace, a `filesystem.additionalAllowWrite` directory), and by other names of the file (a symlink, `/proc/self/fd` of an `O_PATH` descriptor)
# layer: seccomp (`chmod`, `fchmodat` with S_ISUID or S_ISGID → EPERM, whatever the path)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$HOST_DIR/extra" "$FAKE_HOME/src"
  printf '{"filesystem": {"additionalAllowWrite": ["%s"]}}\n' "$HOST_DIR/extra" \
    >"$HOST_DIR/extra-config.json"
}

attempt() {
  capture sandbox_home -c "$TRY_PRELUDE"'cp /usr/bin/id ~/src/h1
try chmod 4755 ~/src/h1'
  expect_rc 0
  expect_refused "chmod 4755 $FAKE_HOME/src/h1" "Operation not permitted"
  local extra="$HOST_DIR/extra"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/extra-config.json" --no-prompt \
    --cwd "$WS" -c "$TRY_PRELUDE"'cp /usr/bin/id '"$extra"'/e1 && cp /usr/bin/id l1 && ln -s l1 link
try chmod 2755 '"$extra"'/e1
try chmod 4755 link
/usr/bin/python3 -c "import os
fd = os.open(\"l1\", os.O_PATH)
try:
    os.chmod(\"/proc/self/fd/%d\" % fd, 0o4755)
    print(\"DONE: chmod /proc/self/fd\")
except OSError as e:
    print(\"REFUSED: chmod /proc/self/fd :: \" + e.strerror)"'
  expect_rc 0
  expect_refused "chmod 2755 $extra/e1" "Operation not permitted"
  expect_refused "chmod 4755 link" "Operation not permitted"
  expect_refused "chmod /proc/self/fd" "Operation not permitted"
  host_no_setid "$FAKE_HOME"
  host_no_setid "$extra"
  # The home's snapshot holds ~/src as setup made it.
  rm -f "$FAKE_HOME/src/h1"
}

run_attempt "$@"
