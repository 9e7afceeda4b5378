#!/usr/bin/env bash
# attempt: create `x.code-workspace` at the workspace root (and one renamed into place from a subdirectory) with a task `"runOn": "folderOpen"` that VS Code runs on the host when the workspace file is opened
# layer: the guard: `*.code-workspace` is a pattern row of the names host programs run; the guard matches the root's entries as they appear, in strict mode too
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local task="{\"folders\": [{\"path\": \".\"}], \"tasks\": {\"version\": \"2.0.0\", \"tasks\": [{\"label\": \"x\", \"type\": \"shell\", \"command\": \"touch $HOST_DIR/pwned-$TAG\", \"runOptions\": {\"runOn\": \"folderOpen\"}}]}}"
  inside_try "mkdir -p sub
try_write x.code-workspace '$task\n'
try_write sub/y.code-workspace '$task\n'
try mv sub/y.code-workspace y.code-workspace"
  expect_rc 0
  expect_done "write x.code-workspace"
  expect_quarantined "$WS/x.code-workspace"
  if grep -qxF "DONE: mv sub/y.code-workspace y.code-workspace" <<<"$OUT"; then
    expect_quarantined "$WS/y.code-workspace"
  fi
  inside_try "try_write z.code-workspace '$task\n'" sandbox_strict
  expect_rc 0
  expect_quarantined "$WS/z.code-workspace"
}

run_attempt "$@"
