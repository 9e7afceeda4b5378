#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo with a split index (core.splitIndex) whose git state (here a long reflog) fills the 64 MiB the supervisor keeps but for less than the shared index: `git checkout other`, whose branches differ outside the package, leaves the host repository on `other` with the old `README.md` and exits 0, with no line
# layer: the supervisor: a shared index beyond what the bound leaves is not kept, but the state is; the index before then cannot be read whole, and the state is put back (exit 125)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"

setup() {
  new_monorepo
  first_commit
  {
    host_git checkout -qb other && echo other >"$MONO/README.md" && host_git commit -qam other
    host_git checkout -q -
    host_git config core.splitIndex true && host_git update-index --split-index
  } >/dev/null
  # A reflog that brings the state the supervisor keeps (docs/security.md, "Repositories around
  # the workspace": HEAD, index, refs/, logs/, ...) to 64 MiB less half the shared index.
  /usr/bin/python3 - "$MONO/.git" <<'PY'
import os, sys
g = sys.argv[1]
total = 0
for name in ["HEAD", "index", "ORIG_HEAD", "FETCH_HEAD", "packed-refs"]:
    if os.path.isfile(os.path.join(g, name)):
        total += os.path.getsize(os.path.join(g, name))
for tree in ["refs", "logs"]:
    for root, _, names in os.walk(os.path.join(g, tree)):
        total += sum(os.path.getsize(os.path.join(root, n)) for n in names)
shared = [n for n in os.listdir(g) if n.startswith("sharedindex.")]
pad = (64 << 20) - total - os.path.getsize(os.path.join(g, shared[0])) // 2
line = b"0" * 40 + b" " + b"1" * 40 + b" pad <pad@example.com> 0 +0000\tpad\n"
os.makedirs(os.path.join(g, "logs/refs/old"))
open(os.path.join(g, "logs/refs/old/pad"), "wb").write((line * (pad // len(line) + 1))[:pad])
PY
}

attempt() {
  local head
  head="$(host_git rev-parse HEAD)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c 'git checkout -q other'
  [ "$(host_git rev-parse HEAD)" = "$head" ] || { show; escaped "the host repository's HEAD moved to other (exit $RC)"; }
  [ -z "$(host_git status --porcelain)" ] || escaped "host git status: $(host_git status --porcelain)"
  expect_rc 125
  expect_err "is missing or larger than 64 MiB"
  expect_err "its HEAD, index, refs and stash are as they were before the command"
}

run_attempt "$@"
