#!/usr/bin/env bash
# attempt: git signs with gpg from a key directory outside the home ($GNUPGHOME, readable inside) through its agent's socket, allowed in hostIPC.allowedSockets as docs/host-ipc.md shows: export the secret key through the agent (gpg --export-secret-keys)
# layer: Unix-socket broker: a connection to gpg-agent's socket is made to its restricted extra socket, which refuses to export secret keys
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"
# shellcheck source=../gpg.sh
source "$(dirname "$0")/../gpg.sh"

setup() {
  gpg_make_key "$FIXTURE/gnupg"
  printf '[commit]\n\tgpgSign = true\n[user]\n\tsigningKey = escape@example.invalid\n' \
    >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  export GNUPGHOME="$FIXTURE/gnupg"
  gpg_agent_config "$GNUPGHOME"
  capture sandbox --config "$HOST_DIR/gpg-config.json" -c "$GPG_EXPORT"
  gpg_agent_stop "$GNUPGHOME"
  refute "PRIVATE KEY BLOCK"
  expect_err "gpg: error getting the KEK: Forbidden"
}

run_attempt "$@"
