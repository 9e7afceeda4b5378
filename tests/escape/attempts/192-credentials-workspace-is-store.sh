#!/usr/bin/env bash
# attempt: the workspace is a directory that holds credentials (~/.aws, ~/.kube): read and rewrite them from there
# layer: mount plan: the credentials are masked inside the workspace too, read-only
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() { plant_credentials; }

attempt() {
  local d
  for d in .aws .kube; do
    capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$FAKE_HOME/$d" -- \
      /bin/bash -c "$READ_EACH
$TRY_PRELUDE
try_write ./$( [ $d = .aws ] && echo credentials || echo config )" bash \
      "$( [ $d = .aws ] && echo credentials || echo config )"
    expect_rc 0
    refute "$CREDENTIAL_MARKER"
    expect_lines "READ $( [ $d = .aws ] && echo credentials || echo config ): "
    expect_refused "write ./$( [ $d = .aws ] && echo credentials || echo config )" \
      "Read-only file system"
  done
}

run_attempt "$@"
