#!/usr/bin/env bash
# attempt: nvm's node is on $PATH, so ~/.nvm is re-exposed: read the registry token of another installed version's global npmrc (`$PREFIX/etc/npmrc`, what `npm config set --location=global` writes)
# layer: mount plan: `<prefix>/etc/npmrc` of every installed version is a read-only copy without its tokens
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  local v
  for v in v20.11.0 v18.19.0; do
    mkdir -p "$FAKE_HOME/.nvm/versions/node/$v/bin" "$FAKE_HOME/.nvm/versions/node/$v/etc"
    printf 'registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm-token-%s\nfund=false\n' \
      "$TAG" >"$FAKE_HOME/.nvm/versions/node/$v/etc/npmrc"
  done
}

attempt() {
  capture env PATH="$FAKE_HOME/.nvm/versions/node/v20.11.0/bin:/usr/bin:/bin" HOME="$FAKE_HOME" \
    "$PI_BIN" run --no-prompt --cwd "$WS" -- /bin/cat \
    "$FAKE_HOME/.nvm/versions/node/v20.11.0/etc/npmrc" "$FAKE_HOME/.nvm/versions/node/v18.19.0/etc/npmrc"
  refute "npm-token-$TAG"
  expect_lines 'registry=https://registry.npmjs.org/' 'fund=false'
  expect_rc 0
}

run_attempt "$@"
