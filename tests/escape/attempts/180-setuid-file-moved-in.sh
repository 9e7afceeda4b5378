#!/usr/bin/env bash
# attempt: move a setuid copy of `id` (setuid before the command, in another directory of the workspace) to a new place, so that a later `chmod` refusal inside does not matter: the host mounts the workspace without nosuid
# layer: the guard: every regular file created, moved in or changed during the command loses S_ISUID and S_ISGID
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$WS/build"
  cp /usr/bin/id "$WS/build/s"
  chmod 6755 "$WS/build/s"
}

attempt() {
  inside_try "
mkdir -p out/bin
try mv build/s out/bin/s"
  expect_rc 0
  expect_done "mv build/s out/bin/s"
  local mode
  mode="$(stat -c %a "$WS/out/bin/s")"
  [ "$mode" = 755 ] || escaped "out/bin/s is mode $mode after the command"
  expect_err "pi-sandbox: cleared the setuid+setgid bit of $WS/out/bin/s"
}

run_attempt "$@"
