#!/usr/bin/env bash
# attempt: `run --timeout 1e10` is refused with "must be a positive number", without saying what the limit is
# layer: command line validation
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox --timeout 1e10 -- true
  expect_rc 125 2
  expect_err "1000000000" "1e9" "1e+09" "1 000 000 000" "1,000,000,000"
  expect_err "1e10"
  # The limit itself is accepted.
  capture sandbox --timeout 1e9 -- true
  expect_rc 0
}

run_attempt "$@"
