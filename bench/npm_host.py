#!/usr/bin/env python3
"""A scripted `pi-sandbox serve` host for bench/npm.sh (issue 13, "A benchmark row").
Standard library only.

Usage: npm_host.py CWD COMMAND TIMEOUT_S -- SERVE_ARGV...

Starts SERVE_ARGV (a `pi-sandbox serve` command line), says hello, runs COMMAND in CWD with
`exec`, answers every `approval_request` with `allow-command` (the question's "Allow
<host:port> for the rest of this command") and counts them, and prints one JSON object on
stdout when the command has ended:
  {"questions": N, "destinations": [...], "seconds": S, "exit": {the exit event},
   "stderr": "the command's stderr"}
`seconds` is the time from sending `exec` to receiving `exit` (time.monotonic()).
"""
import json
import subprocess
import sys
import time


def main():
    cwd, command, timeout = sys.argv[1:4]
    assert sys.argv[4] == "--", __doc__
    serve = subprocess.Popen(sys.argv[5:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, bufsize=1)

    def send(message):
        serve.stdin.write(json.dumps(message) + "\n")
        serve.stdin.flush()

    def events():
        for line in serve.stdout:
            yield json.loads(line)
        raise SystemExit("npm_host.py: pi-sandbox serve ended before the command did")

    stream = events()
    send({"type": "hello", "version": 1})
    assert next(stream)["type"] == "hello"
    started = time.monotonic()
    send({"type": "exec", "id": "npm", "command": command, "cwd": cwd,
          "timeout_s": float(timeout)})
    questions, destinations, stderr = 0, [], []
    for event in stream:
        kind = event["type"]
        if kind == "approval_request":
            questions += 1
            destinations.append(event["request"].get("destination", event["title"]))
            offered = [c["choice"] for c in event["choices"]]
            choice = "allow-command" if "allow-command" in offered else "allow-once"
            send({"type": "approval_response", "id": event["id"],
                  "request_id": event["request_id"], "choice": choice})
        elif kind == "output" and event["stream"] == "stderr":
            stderr.append(event["data"])
        elif kind == "error":
            raise SystemExit(f"npm_host.py: serve said: {event['message']}")
        elif kind == "exit":
            seconds = time.monotonic() - started
            break
    send({"type": "shutdown"})
    serve.stdin.close()
    serve.wait(timeout=30)
    print(json.dumps({"questions": questions, "destinations": destinations,
                      "seconds": round(seconds, 3), "exit": event, "stderr": "".join(stderr)}))


if __name__ == "__main__":
    main()
