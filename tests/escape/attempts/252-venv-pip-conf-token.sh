#!/usr/bin/env bash
# attempt: an activated virtual environment in the home is re-exposed as a toolchain: read the index token of its pip.conf (pip's site config, `sys.prefix/pip.conf`)
# layer: mount plan: `<prefix>/pip.conf` of every install prefix shown is a read-only copy without the URLs' user information
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$FAKE_HOME/venvs/app/bin"
  printf 'home = /usr/bin\n' >"$FAKE_HOME/venvs/app/pyvenv.cfg"
  printf '[global]\nindex-url = https://u:pip-token-%s@pypi.corp.test/simple\ntimeout = 60\n' \
    "$TAG" >"$FAKE_HOME/venvs/app/pip.conf"
}

attempt() {
  capture env VIRTUAL_ENV="$FAKE_HOME/venvs/app" PATH="$FAKE_HOME/venvs/app/bin:/usr/bin:/bin" \
    HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" -- /bin/cat "$FAKE_HOME/venvs/app/pip.conf"
  refute "pip-token-$TAG"
  expect_lines 'index-url = https://pypi.corp.test/simple' 'timeout = 60'
  expect_rc 0
}

run_attempt "$@"
