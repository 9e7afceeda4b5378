#!/usr/bin/env bash
# attempt: register nested repositories as gitlinks where the bounded scan does not look (a skipped `node_modules/`, six levels deep, a git directory named `store` behind a `.git` file, and from a subdirectory workspace one planted in the enclosing repository's `.git/modules/`), each with a `core.fsmonitor` and a hook, for the next host `git status` in the outer repository (found in a fresh user's trial)
# layer: the guard: after the command, the repository's index is read for new gitlinks; their repositories' hooks are quarantined and their configuration cleaned
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -c "
n() {
  git init -q \"\$1\" && git -C \"\$1\" -c user.name=t -c user.email=t@e commit -q --allow-empty -m e &&
  git -C \"\$1\" config core.fsmonitor 'touch $HOST_DIR/pwned-fsm-$TAG-'\"\$2\"'; false' &&
  printf '#!/bin/sh\ntouch $HOST_DIR/pwned-hook-$TAG\n' > \"\$1/.git/hooks/post-checkout\"
  chmod +x \"\$1/.git/hooks/post-checkout\" 2>/dev/null; true
}
n node_modules/evil 1 && n a/b/c/d/e/evil 2 && n sub 3 && mv sub/.git store &&
echo 'gitdir: ../store' > sub/.git && git add node_modules/evil a/b/c/d/e/evil sub 2>/dev/null
echo registered"
  expect_out registered
  local d
  for d in node_modules/evil/.git a/b/c/d/e/evil/.git store; do
    # `store` was `sub/.git` when the guard first saw it.
    if [ "$d" = store ]; then
      expect_err "pi-sandbox: cleaned $WS/store/config in " "pi-sandbox: cleaned $WS/sub/.git/config in "
    else
      expect_err "pi-sandbox: cleaned $WS/$d/config in "
    fi
    grep -qi fsmonitor "$WS/$d/config" && escaped "$d/config still has an fsmonitor"
    [ -e "$WS/$d/hooks/post-checkout" ] && escaped "$d/hooks/post-checkout is still there"
  done
  # From a subdirectory workspace: a submodule's git directory planted in the enclosing
  # repository's writable `.git/modules/`, registered in its index.
  mkdir -p "$WS/pkg"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS/pkg" -c "
G=\$(cd \$(git rev-parse --git-common-dir) && pwd); mkdir -p \$G/modules/evil
git init -q --separate-git-dir=\$G/modules/evil sub && git -C sub -c user.name=t -c user.email=t@e commit -q --allow-empty -m e &&
git -C sub config core.fsmonitor 'touch $HOST_DIR/pwned-fsm-$TAG-4; false' &&
printf '#!/bin/sh
touch $HOST_DIR/pwned-hook-$TAG
' > \$G/modules/evil/hooks/post-checkout &&
chmod +x \$G/modules/evil/hooks/post-checkout 2>/dev/null; git add sub 2>/dev/null
echo planted"
  expect_out planted
  expect_err "pi-sandbox: cleaned $WS/.git/modules/evil/config in "
  [ -e "$WS/.git/modules/evil/hooks/post-checkout" ] && escaped "the planted module's hook is still there"
  # Host git in the outer repository recurses into the gitlinks.
  (cd "$WS" && HOME="$FAKE_HOME" git status >/dev/null 2>&1)
  host_absent "$HOST_DIR/pwned-fsm-$TAG-1" "$HOST_DIR/pwned-fsm-$TAG-2" \
    "$HOST_DIR/pwned-fsm-$TAG-3" "$HOST_DIR/pwned-fsm-$TAG-4" "$HOST_DIR/pwned-hook-$TAG"
  # The cleaned module directory is ordinary git data the command was allowed to write; it goes
  # so that the snapshot compares the rest of `.git`.
  rm -rf "$WS/.git/modules"
}

run_attempt "$@"
