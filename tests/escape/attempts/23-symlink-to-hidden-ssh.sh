#!/usr/bin/env bash
# attempt: a symlink in the workspace to `~/.ssh` (made on the host beforehand, or inside) reads the private key or plants `authorized_keys`
# layer: mount plan: the home is hidden by its real path, so a link resolves into the private layer
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  ln -s "$FAKE_HOME/.ssh" "$WS/sshlink"
}

attempt() {
  inside_try '
try cat sshlink/id_ed25519
try cat "$(readlink -f sshlink)/id_ed25519"
ln -s ~/.ssh sshlink2
try cat sshlink2/id_ed25519
try cat /proc/self/root'"$FAKE_HOME"'/.ssh/id_ed25519
try cat /proc/self/cwd/../.ssh/id_ed25519
try_write sshlink/authorized_keys
try ls -A sshlink/'
  refute "$FAKE_KEY_MARKER"
  expect_refused "cat sshlink/id_ed25519" "No such file or directory"
  expect_refused "cat sshlink2/id_ed25519" "No such file or directory"
  expect_refused "cat /proc/self/root$FAKE_HOME/.ssh/id_ed25519" "No such file or directory"
  expect_refused "cat /proc/self/cwd/../.ssh/id_ed25519" "No such file or directory"
  # The private layer may accept the write; the host's ~/.ssh must not see it.
  host_absent "$FAKE_HOME/.ssh/authorized_keys"
}

run_attempt "$@"
