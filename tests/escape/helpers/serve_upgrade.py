# serve_upgrade.py BINARY WS MODE: starts `BINARY serve`, upgrades BINARY on the host while it
# runs, then asks serve to run a command that overwrites `vendor/pi-sandbox` in WS; prints
# `hello: ...`, each `output: ...` line of that command and its `exit: ...` event.
#   MODE rename-over: a new file renamed over BINARY (/proc/self/exe then reads `... (deleted)`);
#   MODE move-aside:  BINARY moved to BINARY.old and a copy put at BINARY (/proc/self/exe names
#                     the .old file).
# Used by escape attempts 144 and 149.
import json
import os
import shutil
import subprocess
import sys

binary, ws, mode = sys.argv[1], sys.argv[2], sys.argv[3]
serve = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(message):
    serve.stdin.write(json.dumps(message) + "\n")
    serve.stdin.flush()


send({"type": "hello", "version": 1})
print("hello:", serve.stdout.readline().strip())
if mode == "rename-over":
    shutil.copy(binary, binary + ".new")
    os.rename(binary + ".new", binary)
elif mode == "move-aside":
    os.rename(binary, binary + ".old")
    shutil.copy(binary + ".old", binary)
else:
    sys.exit("serve_upgrade.py: MODE is rename-over or move-aside")
send({"type": "exec", "id": "c1", "cwd": ws,
      "command": "printf '#!/bin/sh\\necho REPLACED\\n' > vendor/pi-sandbox && echo DONE || echo REFUSED"})
while True:
    line = serve.stdout.readline()
    if not line:
        break
    event = json.loads(line)
    if event.get("type") == "output":
        print("output:", event.get("data", "").strip())
    if event.get("type") == "exit" and event.get("id") == "c1":
        print("exit:", json.dumps(event))
        break
send({"type": "shutdown"})
serve.wait(timeout=30)
