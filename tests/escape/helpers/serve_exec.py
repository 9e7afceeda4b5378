# serve_exec.py BINARY CWD ENV_JSON COMMAND: starts `BINARY serve`, asks it to run COMMAND in CWD
# with the exec request's `env` ENV_JSON (a JSON object of strings), and prints `hello: ...`,
# each `output: ...` line of the command and its `exit: ...` event. Used by escape attempt 158.
import json
import subprocess
import sys

binary, cwd, env, command = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
serve = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def send(message):
    serve.stdin.write(json.dumps(message) + "\n")
    serve.stdin.flush()


send({"type": "hello", "version": 1})
print("hello:", serve.stdout.readline().strip())
send({"type": "exec", "id": "c1", "cwd": cwd, "command": command, "env": env})
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
