#!/usr/bin/env bash
# attempt: run pi-sandbox itself inside the sandbox (`pi-sandbox run`, `serve`), hoping its setup reopens what the outer sandbox closed
# layer: seccomp (no new user namespace): the inner pi-sandbox fails closed with exit 125
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -c "'$PI_BIN' run --no-prompt -c 'echo INNER-RAN'"
  expect_rc 125
  refute INNER-RAN
  expect_err "pi-sandbox: "
}

run_attempt "$@"
