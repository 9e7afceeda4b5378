#!/usr/bin/env bash
# attempt: `filesystem.additionalAllowRead` lists the directories that hold credentials (~/.aws, ~/.config, ~/.ssh): read what is in them
# layer: mount plan: each credential inside a re-exposed directory is masked again
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  plant_credentials
  printf '{"filesystem": {"additionalAllowRead": ["%s/.aws", "%s/.config", "%s/.ssh", "%s/.docker"]}}\n' \
    "$FAKE_HOME" "$FAKE_HOME" "$FAKE_HOME" "$FAKE_HOME" >"$HOST_DIR/read-stores.json"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/read-stores.json" --no-prompt \
    --cwd "$WS" -- /bin/bash -c "$READ_EACH" bash "$FAKE_HOME/.aws/credentials" \
    "$FAKE_HOME/.config/gh/hosts.yml" "$FAKE_HOME/.config/gcloud/credentials.db" \
    "$FAKE_HOME/.ssh/id_ed25519" "$FAKE_HOME/.docker/config.json"
  expect_rc 0
  refute "$CREDENTIAL_MARKER" "$FAKE_KEY_MARKER"
  local f
  for f in .aws/credentials .config/gh/hosts.yml .config/gcloud/credentials.db .ssh/id_ed25519 \
    .docker/config.json; do
    expect_lines "READ $FAKE_HOME/$f: "
  done
}

run_attempt "$@"
