#!/usr/bin/env bash
# attempt: replace `.git/config` by a symlink to a configuration the command wrote (rename of a prepared symlink over it, or `ln -sf`), or by a hard link to it, for host git to read `core.fsmonitor` there
# layer: the guard: a `.git/config` that is not a regular file, or whose content adds a dangerous key, is undone at once (the original put back)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local before
  before="$(cat "$WS/.git/config")"
  inside_try "
cp .git/config evil.cfg
printf '\tfsmonitor = touch $HOST_DIR/pwned-$TAG\n' >> evil.cfg
try ln -s ../evil.cfg .git/cfg-link
try mv -T .git/cfg-link .git/config
sleep 0.3
try ln -sf ../evil.cfg .git/config
sleep 0.3
try ln evil.cfg .git/cfg-hard
try mv -f .git/cfg-hard .git/config
sleep 0.3
ls -l .git/config"
  expect_rc 0
  expect_done "mv -T .git/cfg-link .git/config"
  expect_undone "$WS/.git/config" "not a file"
  [ -f "$WS/.git/config" ] && [ ! -L "$WS/.git/config" ] || escaped ".git/config is not a regular file"
  [ "$(cat "$WS/.git/config")" = "$before" ] || escaped ".git/config changed: $(cat "$WS/.git/config")"
  HOME="$FAKE_HOME" git -C "$WS" status >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG" "$WS/.git/cfg-link" "$WS/.git/cfg-hard"
  grep -q fsmonitor "$WS/evil.cfg" || escaped "the guard changed the command's own evil.cfg"
}

run_attempt "$@"
