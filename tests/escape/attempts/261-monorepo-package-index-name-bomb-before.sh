#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; an earlier command left a version-4 index of 64-byte entries that each repeat the previous entry's 4000-byte path (prefix compression), hoping the supervisor, reading the index as every later command starts (the package's tracked files), unfolds 38 MB into 2.4 GB of paths and dies before running it (its memory bound here stands for the machine's): no command runs in the package any more
# layer: the supervisor: the paths of one index hold at most 64 MiB together; beyond, the index is unreadable (no file of the package is stamped, and a command that changes it and fails has the state put back)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

setup() {
  new_monorepo
  first_commit
  # What the earlier command wrote (600000 entries, 38 MB on disk).
  /usr/bin/python3 - "$MONO/.git/index" <<'PY'
import hashlib, struct, sys
path = b"a" * 4000
start = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + bytes(20) + struct.pack(">H", 4000)
index = b"DIRC" + struct.pack(">II", 4, 600000) + start + b"\0" + path + b"\0"
index += (start + b"\0\0") * 599999
index += hashlib.sha1(index).digest()
open(sys.argv[1], "wb").write(index)
PY
}

attempt() {
  # The address-space bound stands for the machine's memory (the battery runs beside others).
  capture prlimit --as=2147483648 env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c 'echo ran'
  if [ "$RC" = 134 ] || [ "$RC" = 137 ] || [[ "$ERR" == *bad_alloc* ]]; then
    show
    escaped "the supervisor died reading the index (exit $RC)"
  fi
  expect_rc 0
  [ "$OUT" = ran ] || { show; escaped "the command did not run"; }
}

run_attempt "$@"
