#!/usr/bin/env bash
# attempt: `pi-sandbox serve` runs from `~/ws/vendor/pi-sandbox` while an upgrade moves the running binary aside (`mv pi-sandbox pi-sandbox.old`) and puts the new one in its place, so that /proc/self/exe names the old file; the next command of that serve overwrites the new binary, which the host runs next
# layer: serve: its workers protect the binary at the path serve started from as well as the running one (`--binary-at-start`); the mount plan binds both read-only
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
os.rename(binary, binary + ".old")
shutil.copy(binary + ".old", binary)
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
