#!/usr/bin/env bash
# attempt: the workspace is the home: read the tokens next to the settings of ~/.npmrc, ~/.yarnrc.yml, pip.conf, Cargo's config.toml, Maven's settings.xml and Docker's config.json
# layer: mount plan: each is a read-only copy without its credentials (the settings stay), bound last
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../mixed_config.sh
source "$(dirname "$0")/../mixed_config.sh"

setup() { plant_mixed_config; }

attempt() {
  capture sandbox_home -- /bin/cat "${MIXED_FILES[@]/#/$FAKE_HOME/}"
  expect_rc 0
  expect_mixed_config_sanitized
}

run_attempt "$@"
