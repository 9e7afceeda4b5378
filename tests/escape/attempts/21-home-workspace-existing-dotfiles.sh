#!/usr/bin/env bash
# attempt: workspace = the home: overwrite, rename or replace existing `~/.bashrc`, `~/.gitconfig`, `~/.config/git/config`, `~/.ssh/id_ed25519` and `~/.pi/agent/settings.json`
# layer: mount plan: existing protected paths bound read-only, their parents bound onto themselves
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
try_write .bashrc
try_write .gitconfig
try_write .config/git/config
try_write .ssh/id_ed25519
try_write .pi/agent/settings.json
try mv .bashrc .bashrc.old
try mv .ssh .ssh-old
try mv .config .config-old
try ln -sf /tmp/x .gitconfig
try git config --global core.fsmonitor true' sandbox_home
  expect_rc 0
  local f
  for f in .bashrc .gitconfig .config/git/config .ssh/id_ed25519 .pi/agent/settings.json; do
    expect_refused "write $f" "Read-only file system"
  done
  expect_refused "mv .bashrc .bashrc.old" "Device or resource busy" "Read-only file system"
  expect_refused "mv .ssh .ssh-old" "Device or resource busy" "Read-only file system"
  expect_refused "mv .config .config-old" "Device or resource busy" "Read-only file system"
  expect_refused "ln -sf /tmp/x .gitconfig" "Device or resource busy" "Read-only file system"
  expect_refused "git config --global core.fsmonitor true" "Read-only file system" \
    "could not lock config file" "Device or resource busy"
}

run_attempt "$@"
