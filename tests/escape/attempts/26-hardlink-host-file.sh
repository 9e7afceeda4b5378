#!/usr/bin/env bash
# attempt: hard links from the workspace to host files outside it (`/etc/hostname`, the pi-sandbox binary, `~/.gitconfig`), then written through the link
# layer: mount plan: the workspace is its own mount (EXDEV); protected_hardlinks for files of others
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
try ln /etc/hostname l-hostname
try ln '"$PI_BIN"' l-binary
try ln ~/.gitconfig l-gitconfig
try ln /etc/passwd l-passwd'
  expect_rc 0
  expect_refused "ln /etc/hostname l-hostname" "Invalid cross-device link" "Operation not permitted"
  expect_refused "ln $PI_BIN l-binary" "Invalid cross-device link" "Operation not permitted"
  expect_refused "ln $FAKE_HOME/.gitconfig l-gitconfig" "Invalid cross-device link" \
    "Operation not permitted"
  expect_refused "ln /etc/passwd l-passwd" "Invalid cross-device link" "Operation not permitted"
  host_absent "$WS/l-hostname" "$WS/l-binary" "$WS/l-gitconfig" "$WS/l-passwd"
}

run_attempt "$@"
