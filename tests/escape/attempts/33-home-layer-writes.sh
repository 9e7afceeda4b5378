#!/usr/bin/env bash
# attempt: with the workspace inside the home, write `~/.bashrc`, `~/.ssh/authorized_keys`, `~/.local/bin/git`, `~/.config/autostart/` in the home layer, hoping it reaches the real home
# layer: mount plan: the private home layer (tmpfs) vanishes with the command
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -c 'echo "pwned" >> ~/.bashrc; mkdir -p ~/.ssh ~/.local/bin ~/.config/autostart
echo pwned >> ~/.ssh/authorized_keys; echo pwned > ~/.local/bin/git
echo pwned > ~/.config/autostart/x.desktop; echo written'
  expect_rc 0
  expect_out written
  host_absent "$FAKE_HOME/.ssh/authorized_keys" "$FAKE_HOME/.local/bin/git" \
    "$FAKE_HOME/.config/autostart"
  # The next command starts from an empty layer again.
  capture sandbox -c 'cat ~/.bashrc ~/.local/bin/git 2>&1; true'
  refute pwned
}

run_attempt "$@"
