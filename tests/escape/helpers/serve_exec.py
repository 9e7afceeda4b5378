# serve_exec.py BINARY CWD ENV_JSON COMMAND [UPGRADE]: starts `BINARY serve`, optionally upgrades
# BINARY on the host while serve runs, then asks serve to run COMMAND in CWD with the exec
# request's `env` ENV_JSON (a JSON object of strings, or `null` for no `env`); prints
# `hello: ...`, each `output: ...` line of the command and its `exit: ...` event.
#   UPGRADE rename-over: a new file renamed over BINARY (/proc/self/exe then reads `... (deleted)`);
#   UPGRADE move-aside:  BINARY moved to BINARY.old and a copy put at BINARY (/proc/self/exe
#                        names the .old file).
# Used by escape attempts 144, 149 and 158.
import json
import os
import shutil
import subprocess
import sys

binary, cwd, env, command = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
upgrade = sys.argv[5] if len(sys.argv) > 5 else ""
serve = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(message):
    serve.stdin.write(json.dumps(message) + "\n")
    serve.stdin.flush()


send({"type": "hello", "version": 1})
print("hello:", serve.stdout.readline().strip())
if upgrade == "rename-over":
    shutil.copy(binary, binary + ".new")
    os.rename(binary + ".new", binary)
elif upgrade == "move-aside":
    os.rename(binary, binary + ".old")
    shutil.copy(binary + ".old", binary)
elif upgrade:
    sys.exit("serve_exec.py: UPGRADE is rename-over or move-aside")
request = {"type": "exec", "id": "c1", "cwd": cwd, "command": command}
if env is not None:
    request["env"] = env
send(request)
while True:
    line = serve.stdout.readline()
    if not line:
        break
    event = json.loads(line)
    if event.get("type") == "output":
        print("output:", event.get("data", "").strip())
    if event.get("type") == "exit" and event.get("id") == "c1":
        print("exit:", json.dumps(event, sort_keys=True))
        break
send({"type": "shutdown"})
serve.wait(timeout=30)
