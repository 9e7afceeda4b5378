#!/usr/bin/env bash
# attempt: git signs with gpg from the default ~/.gnupg, its public parts shown inside and its agent's socket allowed: read the private keys, the revocation certificate and a ~/.gnupg/pubring.gpg that links to a private key, and export the secret key through the agent
# layer: session: only gpg's public files are shown, and none whose real path leads to private-keys-v1.d or openpgp-revocs.d; Unix-socket broker: the agent is reached through its restricted extra socket
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"
# shellcheck source=../gpg.sh
source "$(dirname "$0")/../gpg.sh"

setup() {
  gpg_make_key "$FAKE_HOME/.gnupg"
  plant_credentials
  ln -s private-keys-v1.d/ABCDEF.key "$FAKE_HOME/.gnupg/pubring.gpg"
  printf '[commit]\n\tgpgSign = true\n[user]\n\tsigningKey = escape@example.invalid\n' \
    >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  local g="$FAKE_HOME/.gnupg" files=() f
  for f in "$g"/private-keys-v1.d/*.key "$g"/openpgp-revocs.d/*.rev "$g/pubring.gpg"; do
    files+=("$f")
  done
  gpg_agent_config "$g"
  capture sandbox --config "$HOST_DIR/gpg-config.json" -- /bin/bash -c "$READ_EACH" bash "${files[@]}"
  local reads_out="$OUT" reads_err="$ERR"
  capture sandbox --config "$HOST_DIR/gpg-config.json" -c "$GPG_EXPORT"
  gpg_agent_stop "$g"
  refute "PRIVATE KEY BLOCK"
  expect_err "gpg: error getting the KEK: Forbidden" "gpg: WARNING: nothing exported"
  OUT="$reads_out" ERR="$reads_err"
  refute "$CREDENTIAL_MARKER" "REVOCATION" "(private-key" "(protected-private-key"
  for f in "${files[@]}"; do expect_lines "FAILED $f: cat: $f: No such file or directory"; done
}

run_attempt "$@"
