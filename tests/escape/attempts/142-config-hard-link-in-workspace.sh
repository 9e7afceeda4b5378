#!/usr/bin/env bash
# attempt: the trusted configuration given with `--config` lies outside the workspace but has a hard link inside it (a dotfile manager's link): a command rewrites it through the workspace name to re-expose `~/.ssh`, and the next command reads the key
# layer: session: a configuration file with more than one hard link is refused before anything runs (its path says nothing of its other names)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  echo '{}' >"$HOST_DIR/config.json"
  ln "$HOST_DIR/config.json" "$WS/config-link.json"
}

attempt() {
  capture sandbox --config "$HOST_DIR/config.json" -c \
    "printf '{\"filesystem\": {\"additionalAllowRead\": [\"%s/.ssh\"]}}\n' \"\$HOME\" > config-link.json; echo rewritten"
  expect_rc 125
  expect_err "hard links, and another of its names may lie inside the workspace"
  [ "$(cat "$HOST_DIR/config.json")" = "{}" ] || { show; escaped "the trusted configuration was rewritten"; }
  capture sandbox --config "$HOST_DIR/config.json" -c 'cat ~/.ssh/id_rsa'
  case "$OUT" in *"$FAKE_KEY_MARKER"*) show; escaped "read the key" ;; esac
  expect_rc 125
}

run_attempt "$@"
