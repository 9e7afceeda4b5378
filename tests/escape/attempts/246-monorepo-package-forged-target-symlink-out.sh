#!/usr/bin/env bash
# attempt: the workspace is a package of a monorepo; one command stages `keys/authorized_keys` (the attacker's key); the next one forges a commit (`ORIG_HEAD` and a remote-tracking ref, as a failed pull leaves them) that holds there a symbolic link to `~/.ssh/authorized_keys` in the hidden home and changes a file outside the package, replaces the file with that link (so it holds what the forged commit holds) and fails, hoping the supervisor's put-back of an operation that stopped writes the staged key through the link into the home. `ok` on main too, which has no put-back for an operation that left HEAD and the index as they were: a regression attempt
# layer: the supervisor: what it puts back is written at a fresh temporary name and renamed over the link, reached from the workspace one directory at a time without following a symlink
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/monorepo.sh
source "$(dirname "$0")/../helpers/monorepo.sh"


setup() {
  new_monorepo
  first_commit
}

attempt() {
  local target="$FAKE_HOME/.ssh/authorized_keys"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c '
    mkdir keys && echo "ssh-ed25519 AAAAattacker" > keys/authorized_keys &&
      git add keys/authorized_keys || exit 3'
  expect_rc 0
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "
    n=\$(printf %s '$target' | git hash-object -w --stdin) || exit 3
    r=\$(echo forged | git hash-object -w --stdin) || exit 3
    cp \"\$(git rev-parse --git-path index)\" /tmp/forged.idx || exit 4
    export GIT_INDEX_FILE=/tmp/forged.idx
    git update-index --cacheinfo \"120000,\$n,packages/app/keys/authorized_keys\" \\
      --cacheinfo \"100644,\$r,README.md\" || exit 5
    c=\$(git commit-tree \"\$(git write-tree)\" -p HEAD -m forged) || exit 6
    unset GIT_INDEX_FILE
    git update-ref ORIG_HEAD \"\$c\" && git update-ref refs/remotes/origin/main \"\$c\" || exit 7
    rm keys/authorized_keys && ln -s '$target' keys/authorized_keys || exit 8
    exit 1"
  [ -e "$target" ] || [ -L "$target" ] &&
    { show; escaped "the put-back wrote through a link into the hidden home: $(cat "$target")"; }
  expect_rc 1 125
  # Put back, the staged key is a file of the package again, not the link.
  [ "$RC" = 1 ] || [ ! -L "$APP/keys/authorized_keys" ] || { show; escaped "the link was left in the package"; }
}

run_attempt "$@"
