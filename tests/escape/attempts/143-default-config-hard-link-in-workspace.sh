#!/usr/bin/env bash
# attempt: the trusted configuration at its default location (`~/.pi/agent/extensions/pi-sandbox/config.json`, protected by path) has a hard link inside the workspace: a command rewrites it through the workspace name to re-expose `~/.ssh`, and the next command reads the key
# layer: session: a configuration file with more than one hard link is refused at its default location too (the protection of a path does not cover the file's other names)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$FAKE_HOME/.pi/agent/extensions/pi-sandbox"
  echo '{}' >"$FAKE_HOME/.pi/agent/extensions/pi-sandbox/config.json"
  ln "$FAKE_HOME/.pi/agent/extensions/pi-sandbox/config.json" "$WS/config-link.json"
}

attempt() {
  capture sandbox -c \
    "printf '{\"filesystem\": {\"additionalAllowRead\": [\"%s/.ssh\"]}}\n' \"\$HOME\" > config-link.json; echo rewritten"
  expect_rc 125
  expect_err "hard links, and another of its names may lie inside the workspace"
  [ "$(cat "$FAKE_HOME/.pi/agent/extensions/pi-sandbox/config.json")" = "{}" ] ||
    { show; escaped "the trusted configuration was rewritten"; }
  capture sandbox -c 'cat ~/.ssh/id_ed25519'
  case "$OUT" in *"$FAKE_KEY_MARKER"*) show; escaped "read the key" ;; esac
  expect_rc 125
}

run_attempt "$@"
