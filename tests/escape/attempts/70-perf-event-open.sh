#!/usr/bin/env bash
# attempt: `perf_event_open` on itself (a kernel attack surface and a side channel)
# layer: seccomp (`perf_event_open` → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_sc perf-event-open
  expect_rc 0
  expect_sc perf-event-open "EPERM (Operation not permitted)"
}

run_attempt "$@"
