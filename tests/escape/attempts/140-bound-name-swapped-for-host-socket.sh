#!/usr/bin/env bash
# attempt: bind a socket in the workspace (so its name counts as the sandbox's), then rename it away and put a hard link to a host socket of the same file system at that name, and connect
# layer: the Unix-socket broker (the inode the sandbox bound is recorded, not its name; the host socket's inode is the host's)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/sub"
}

attempt() {
  # The host socket lives in the workspace (same mount): a hard link to it is possible.
  host_listen unix "$WS/sub/host.sock"
  capture sandbox -- "$PY" -c '
import os, socket, sys
try:
    s = socket.socket(socket.AF_UNIX); s.bind("own.sock"); s.listen(1)
    os.rename("own.sock", "own-moved.sock")
    os.link("sub/host.sock", "own.sock")
    c = socket.socket(socket.AF_UNIX); c.settimeout(3)
    c.connect("own.sock"); print("connect: OK")
except OSError as e:
    print("connect:", e.errno)
'
  expect_rc 0
  case "$OUT" in
    *"connect: 13"* | *"connect: 1"* | *"link"*"Operation not permitted"*) ;;
    *) show; escaped "the swapped name reached the host socket: $OUT" ;;
  esac
  listen_saw_nothing
}

run_attempt "$@"
