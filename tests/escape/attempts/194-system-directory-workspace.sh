#!/usr/bin/env bash
# attempt: a system directory as the workspace (`--cwd /etc`, `/usr/local`, `/var/lib`), where a command run as root could rewrite what the host runs
# layer: session: a system directory is refused as a workspace, as `/` is
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local dir
  for dir in /etc /usr/local /var/lib; do
    capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$dir" -- \
      /bin/sh -c "echo ran-$TAG; test -w . && echo writable-$TAG"
    refute "ran-$TAG"
    expect_rc 125
    expect_err "refusing the workspace \"$dir\": it "
  done
}

run_attempt "$@"
