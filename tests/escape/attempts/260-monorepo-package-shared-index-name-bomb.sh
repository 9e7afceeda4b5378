#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; the command writes a split index whose shared index is a version-4 index of 64-byte entries that each repeat the previous entry's 4000-byte path (prefix compression), and fails, hoping the supervisor, merging the two after the command, unfolds 38 MB into 2.4 GB of paths and dies (its memory bound here stands for the machine's): the command's changes to the git state stay, and every later command dies the same way
# layer: the supervisor: the paths of one index (or shared index) hold at most 64 MiB together; beyond, the index is unreadable and the state is put back (exit 125)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

setup() {
  new_monorepo
  first_commit
  # The shared index (600000 entries, 38 MB on disk), and a split index of no entries of its
  # own whose link names the shared index's checksum; the command copies both into place.
  /usr/bin/python3 - "$MONO" <<'PY'
import hashlib, struct, sys
mono = sys.argv[1]
path = b"a" * 4000
start = struct.pack(">10I", 0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0) + bytes(20) + struct.pack(">H", 4000)
shared = b"DIRC" + struct.pack(">II", 4, 600000) + start + b"\0" + path + b"\0"
shared += (start + b"\0\0") * 599999
shared += hashlib.sha1(shared).digest()
name = shared[-20:]
split = b"DIRC" + struct.pack(">II", 2, 0) + b"link" + struct.pack(">I", 20) + name
split += hashlib.sha1(split).digest()
open(mono + "/crafted-shared", "wb").write(shared)
open(mono + "/crafted-split", "wb").write(split)
open(mono + "/crafted-name", "w").write("sharedindex." + name.hex())
PY
}

attempt() {
  local index
  index="$(sha256sum <"$MONO/.git/index")"
  # The address-space bound stands for the machine's memory (the battery runs beside others).
  capture prlimit --as=2147483648 env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    g=$(git rev-parse --absolute-git-dir) || exit 3
    cp ../../crafted-shared "$g/$(cat ../../crafted-name)" && cp ../../crafted-split "$g/index" || exit 4
    exit 1'
  if [ "$RC" = 134 ] || [ "$RC" = 137 ] || [[ "$ERR" == *bad_alloc* ]]; then
    show
    escaped "the supervisor died reading the shared index (exit $RC)"
  fi
  [ "$(sha256sum <"$MONO/.git/index")" = "$index" ] || { show; escaped "the crafted index stayed"; }
  [ ! -e "$MONO/.git/$(cat "$MONO/crafted-name")" ] || escaped "the crafted shared index stayed"
  expect_rc 125
  expect_err "the paths up to it hold more than 64 MiB"
  expect_err "its HEAD, index, refs and stash are as they were before the command"
}

run_attempt "$@"
