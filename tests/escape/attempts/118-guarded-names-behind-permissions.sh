#!/usr/bin/env bash
# attempt: hide guarded names from the guard behind permissions the command sets on its own files: `.claude` (holding `commands/`) and `.pi` (holding `settings.json`) moved into place with mode 000, a `.git/config` with `core.fsmonitor` moved into place with mode 000; on the host the user, meeting "Permission denied", gives the permissions back and runs git
# layer: the guard: a name it cannot look at is not left for later (a parent it cannot search, a configuration it cannot read)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local before
  before="$(cat "$WS/.git/config")"
  capture sandbox -c "
mkdir -p c/commands && echo x > c/commands/x.md && chmod 000 c && mv c .claude
mkdir -p p && echo '{}' > p/settings.json && chmod 000 p && mv p .pi
cp .git/config .git/c.tmp && printf '[core]\n\tfsmonitor = touch $HOST_DIR/pwned-$TAG\n' >> .git/c.tmp
chmod 000 .git/c.tmp && mv .git/c.tmp .git/config
sleep 0.3
echo done"
  expect_rc 0
  expect_out done
  # The user's repair on the host, then what host programs read.
  chmod u+rwx "$WS/.claude" "$WS/.pi" 2>/dev/null
  chmod u+rw "$WS/.git/config"
  HOME="$FAKE_HOME" git -C "$WS" status >/dev/null 2>&1
  host_absent "$HOST_DIR/pwned-$TAG" "$WS/.claude/commands" "$WS/.pi/settings.json"
  grep -q fsmonitor "$WS/.git/config" && escaped ".git/config keeps core.fsmonitor: $(cat "$WS/.git/config")"
  [ "$(cat "$WS/.git/config")" = "$before" ] || escaped ".git/config changed"
  chmod 644 "$WS/.git/config"
  rm -rf "$WS/.claude" "$WS/.pi"
}

run_attempt "$@"
