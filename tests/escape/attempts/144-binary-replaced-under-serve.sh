#!/usr/bin/env bash
# attempt: `pi-sandbox serve` runs from `~/ws/vendor/pi-sandbox` while an upgrade replaces that file (a new file renamed over it, so the running binary's /proc/self/exe reads `... (deleted)`); the next command of that serve then overwrites the new binary, which the host runs next
# layer: session: the binary's path is read from /proc/self/exe without its ` (deleted)` suffix, and a binary whose path cannot be found refuses to sandbox (fail closed); the mount plan binds it read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/vendor"
  cp "$PI_BIN" "$WS/vendor/pi-sandbox"
}

attempt() {
  cd "$WS" || exit 2
  # The driver starts serve, replaces its binary on the host, then asks serve to run the write.
  capture env HOME="$FAKE_HOME" python3 -c '
import json, os, shutil, subprocess, sys
binary, ws = sys.argv[1], sys.argv[2]
serve = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(message):
    serve.stdin.write(json.dumps(message) + "\n"); serve.stdin.flush()
send({"type": "hello", "version": 1})
print("hello:", serve.stdout.readline().strip())
shutil.copy(binary, binary + ".new")
os.rename(binary + ".new", binary)
send({"type": "exec", "id": "c1", "cwd": ws,
      "command": "printf \"#!/bin/sh\\necho REPLACED\\n\" > vendor/pi-sandbox && echo DONE || echo REFUSED"})
while True:
    line = serve.stdout.readline()
    if not line: break
    event = json.loads(line)
    if event.get("type") == "output": print("output:", event.get("data", "").strip())
    if event.get("type") == "exit" and event.get("id") == "c1":
        print("exit:", json.dumps(event)); break
send({"type": "shutdown"})
serve.wait(timeout=30)
' "$WS/vendor/pi-sandbox" "$WS"
  refute "output: DONE"
  capture env HOME="$FAKE_HOME" ./vendor/pi-sandbox run --no-prompt -c 'echo inside'
  refute REPLACED
  expect_rc 0
  expect_out inside
}

run_attempt "$@"
