#!/usr/bin/env bash
# attempt: git signs with ssh (gpg.format=ssh): user.signingKey names a link ~/.ssh/signing.pub to the private ~/.ssh/id_ed25519, gpg.ssh.allowedSignersFile a private key saved as ~/.ssh/deploy_key; a command leaves the repository's user.signingKey naming another private key (~/.ssh/git_signing); read all three inside
# layer: session: a signing file is shown in the hidden home only when its content is an ssh public key or an allowed signers list (read through symlinks); the hidden home keeps the rest
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

PRIVATE="-----BEGIN OPENSSH PRIVATE KEY-----"

setup() {
  plant_credentials
  local f
  for f in git_signing deploy_key; do
    printf '%s\n%s-%s %s\n-----END OPENSSH PRIVATE KEY-----\n' "$PRIVATE" "$CREDENTIAL_MARKER" \
      "$TAG" "$f" >"$FAKE_HOME/.ssh/$f"
    chmod 600 "$FAKE_HOME/.ssh/$f"
  done
  ln -s id_ed25519 "$FAKE_HOME/.ssh/signing.pub"
  printf '[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tallowedSignersFile = ~/.ssh/deploy_key\n[user]\n\tsigningKey = ~/.ssh/signing.pub\n' \
    >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  local files=("$FAKE_HOME/.ssh/signing.pub" "$FAKE_HOME/.ssh/deploy_key"
    "$FAKE_HOME/.ssh/git_signing")
  capture sandbox -- /bin/bash -c "$READ_EACH" bash "${files[@]}"
  refute "$CREDENTIAL_MARKER" "$FAKE_KEY_MARKER" "$PRIVATE"
  for f in "${files[@]}"; do expect_lines "FAILED $f: cat: $f: No such file or directory"; done
  # user.* is on the guard's allowlist: a command may leave any file named as the repository's
  # signing key for the next one (done here on the host, the repository's config put back after).
  cp "$WS/.git/config" "$HOST_DIR/repo-config"
  git -C "$WS" config user.signingKey "$FAKE_HOME/.ssh/git_signing"
  capture sandbox -- /bin/bash -c "$READ_EACH" bash "${files[@]}"
  cp "$HOST_DIR/repo-config" "$WS/.git/config"
  refute "$CREDENTIAL_MARKER" "$FAKE_KEY_MARKER" "$PRIVATE"
  for f in "${files[@]}"; do expect_lines "FAILED $f: cat: $f: No such file or directory"; done
}

run_attempt "$@"
