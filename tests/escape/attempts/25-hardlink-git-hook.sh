#!/usr/bin/env bash
# attempt: hard links between `.git/hooks` and the rest of the workspace, to write a hook under another name
# layer: mount plan: `.git/hooks` is its own read-only mount (links across mounts fail with EXDEV)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '#!/bin/sh\nexit 0\n' >"$WS/.git/hooks/pre-commit"
  chmod 755 "$WS/.git/hooks/pre-commit"
}

attempt() {
  inside_try '
try ln .git/hooks/pre-commit hook-alias
try ln .git/hooks/pre-commit.sample sample-alias
printf "#!/bin/sh\necho pwned\n" > payload
try ln payload .git/hooks/post-checkout
try ln -f payload .git/hooks/pre-commit
try cp payload .git/hooks/pre-push'
  expect_rc 0
  expect_refused "ln .git/hooks/pre-commit hook-alias" "Invalid cross-device link"
  expect_refused "ln .git/hooks/pre-commit.sample sample-alias" "Invalid cross-device link"
  expect_refused "ln payload .git/hooks/post-checkout" "Invalid cross-device link" \
    "Read-only file system"
  expect_refused "ln -f payload .git/hooks/pre-commit" "Invalid cross-device link" \
    "Read-only file system"
  expect_refused "cp payload .git/hooks/pre-push" "Read-only file system"
  host_absent "$WS/hook-alias" "$WS/sample-alias"
}

run_attempt "$@"
