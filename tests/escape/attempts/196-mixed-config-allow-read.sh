#!/usr/bin/env bash
# attempt: `filesystem.additionalAllowRead` lists the directories of tool configuration (~/.m2, ~/.config/pip, ~/.docker, ~/.cargo) and ~/.yarnrc.yml: read their tokens from a project workspace
# layer: mount plan: each file is a read-only copy without its credentials, bound over the re-exposed path
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../mixed_config.sh
source "$(dirname "$0")/../mixed_config.sh"

setup() {
  plant_mixed_config
  printf '{"filesystem": {"additionalAllowRead": ["%s/.m2", "%s/.config/pip", "%s/.docker", "%s/.cargo", "%s/.yarnrc.yml"]}}\n' \
    "$FAKE_HOME" "$FAKE_HOME" "$FAKE_HOME" "$FAKE_HOME" "$FAKE_HOME" >"$HOST_DIR/read-tools.json"
}

attempt() {
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --config "$HOST_DIR/read-tools.json" --no-prompt \
    --cwd "$WS" -- /bin/cat "${MIXED_FILES[@]/#/$FAKE_HOME/}"
  # The tokens first: before the copies, ~/.npmrc was not there at all (exit 1), and the
  # other files were readable whole.
  expect_mixed_config_sanitized
  expect_rc 0
}

run_attempt "$@"
