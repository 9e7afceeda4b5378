#!/usr/bin/env bash
# attempt: overwrite, replace or remove the workspace's existing secrets (`.env`, `deploy.pem`, `secrets/token`); new secret files (`.env.local`, `secrets2/`) may be made (`cp .env.example .env.local` is ordinary work, not an escape)
# layer: mount plan: existing secrets bound read-only onto themselves; missing secret names are not protected
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  echo "-----BEGIN PRIVATE KEY----- fake" >"$WS/deploy.pem"
  echo "TOKEN=fake-$TAG" >"$WS/.env"
  mkdir -p "$WS/secrets"
  echo "token-$TAG" >"$WS/secrets/token"
  echo "X=1" >"$WS/.env.example"
}

attempt() {
  inside_try '
try_write .env
try_write deploy.pem
try_write secrets/token
try_write secrets/new
try rm -f .env
try rm -f deploy.pem
try rm -rf secrets
try mv .env moved.env
try mv deploy.pem moved.pem
try mv secrets moved-secrets
echo "TOKEN=other" > other.env
try mv -f other.env .env
try cp .env.example .env.local
try_write .env.production "Y=2\n"'
  expect_rc 0
  expect_refused "write .env" "Read-only file system"
  expect_refused "write deploy.pem" "Read-only file system"
  expect_refused "write secrets/token" "Read-only file system"
  expect_refused "write secrets/new" "Read-only file system"
  expect_refused "rm -f .env" "Device or resource busy" "Read-only file system"
  expect_refused "rm -f deploy.pem" "Device or resource busy" "Read-only file system"
  expect_refused "rm -rf secrets" "Device or resource busy" "Read-only file system"
  expect_refused "mv .env moved.env" "Device or resource busy" "Read-only file system"
  expect_refused "mv deploy.pem moved.pem" "Device or resource busy" "Read-only file system"
  expect_refused "mv secrets moved-secrets" "Device or resource busy" "Read-only file system"
  expect_refused "mv -f other.env .env" "Device or resource busy" "Read-only file system"
  [ "$(cat "$WS/deploy.pem")" = "-----BEGIN PRIVATE KEY----- fake" ] || escaped "deploy.pem changed"
  [ "$(cat "$WS/.env")" = "TOKEN=fake-$TAG" ] || escaped ".env changed"
  [ "$(cat "$WS/secrets/token")" = "token-$TAG" ] || escaped "secrets/token changed"
  host_absent "$WS/secrets/new" "$WS/moved.env" "$WS/moved.pem" "$WS/moved-secrets"
  # New secrets are ordinary files, kept on the host and not quarantined.
  expect_done "cp .env.example .env.local"
  expect_done "write .env.production"
  refute "to the quarantine"
  [ "$(cat "$WS/.env.local")" = "X=1" ] || escaped ".env.local was not kept"
  [ "$(cat "$WS/.env.production")" = "Y=2" ] || escaped ".env.production was not kept"
  rm -f "$WS/.env.local" "$WS/.env.production" "$WS/other.env"
}

run_attempt "$@"
