#!/usr/bin/env bash
# attempt: create or overwrite secrets at the workspace root (`.env`, `.env.local`, `secrets/`, `.secrets/`) and an existing `deploy.pem`
# layer: mount plan: placeholders for missing secret names, read-only binds for existing ones
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  echo "-----BEGIN PRIVATE KEY----- fake" >"$WS/deploy.pem"
}

attempt() {
  expect_uncreatable sandbox "$WS/.env" "$WS/.env.local" "$WS/.env.production" \
    "$WS/secrets/token" "$WS/.secrets/token"
  inside_try '
try_write deploy.pem
try rm -f deploy.pem
try mv deploy.pem moved.pem'
  expect_refused "write deploy.pem" "Read-only file system"
  expect_refused "rm -f deploy.pem" "Device or resource busy" "Read-only file system"
  expect_refused "mv deploy.pem moved.pem" "Device or resource busy" "Read-only file system"
  [ "$(cat "$WS/deploy.pem")" = "-----BEGIN PRIVATE KEY----- fake" ] || escaped "deploy.pem changed"
  # .env.example stays an ordinary file.
  capture sandbox -c 'echo X=1 > .env.example && cat .env.example'
  expect_rc 0
  expect_out X=1
}

run_attempt "$@"
