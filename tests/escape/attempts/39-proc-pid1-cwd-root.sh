#!/usr/bin/env bash
# attempt: reach the hidden home through `/proc/<pid>/cwd`, `/proc/<pid>/root` and `/proc/<pid>/fd` of every visible process, pi-sandbox started from inside `~/.ssh`
# layer: Landlock (ptrace scope: no access to pid 1's links) and the pid namespace (no host process visible)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  cd "$FAKE_HOME/.ssh" || exit 2
  inside_try '
try ls /proc/1/cwd/
try cat /proc/1/cwd/id_ed25519
try ls /proc/1/root/
try cat /proc/1/root'"$FAKE_HOME"'/.ssh/id_ed25519
for p in /proc/[0-9]*; do
  cat $p/cwd/id_ed25519 $p/root'"$FAKE_HOME"'/.ssh/id_ed25519 2>/dev/null
  for f in $p/fd/*; do cat "$f/id_ed25519" "$f/.ssh/id_ed25519" 2>/dev/null; done
done
echo scanned'
  cd "$HOST_DIR" || exit 2
  expect_rc 0
  expect_out scanned
  refute "$FAKE_KEY_MARKER"
  expect_refused "ls /proc/1/cwd/" "Permission denied"
  expect_refused "cat /proc/1/cwd/id_ed25519" "Permission denied"
  expect_refused "ls /proc/1/root/" "Permission denied"
}

run_attempt "$@"
