#!/usr/bin/env bash
# attempt: write a hook into `.git/hooks`, remove or rename `.git/hooks` or `.git`, or recreate `.git` elsewhere to run code on the next host `git commit`
# layer: mount plan: `.git/hooks` bound read-only, its parents bound onto themselves
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
try_write .git/hooks/pre-commit "#!/bin/sh\necho pwned\n"
try rm -rf .git/hooks
try mv .git/hooks .git/hooks-old
try mv .git .git-old
try ln -s /tmp .git/hooks/post-commit
try chmod 777 .git/hooks
try touch .git/hooks/pre-commit.sample'
  expect_rc 0
  expect_refused "write .git/hooks/pre-commit" "Read-only file system"
  expect_refused "rm -rf .git/hooks" "Read-only file system" "Device or resource busy"
  expect_refused "mv .git/hooks .git/hooks-old" "Device or resource busy" "Read-only file system"
  expect_refused "mv .git .git-old" "Device or resource busy" "Read-only file system"
  expect_refused "ln -s /tmp .git/hooks/post-commit" "Read-only file system"
  expect_refused "chmod 777 .git/hooks" "Read-only file system"
  expect_refused "touch .git/hooks/pre-commit.sample" "Read-only file system"
}

run_attempt "$@"
