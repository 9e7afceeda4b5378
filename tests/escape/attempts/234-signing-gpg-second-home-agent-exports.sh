#!/usr/bin/env bash
# attempt: the user has a second gpg home (a release key outside the home, not $GNUPGHOME) whose agent's socket is allowed in hostIPC.allowedSockets to sign with it; the command names that home itself (GNUPGHOME=... inside) and exports the secret key through the agent (gpg --export-secret-keys)
# layer: Unix-socket broker: every gpg-agent socket (`S.gpg-agent`), not only the one of the session's gpg home, is connected to its restricted extra socket, which refuses to export secret keys
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"
# shellcheck source=../gpg.sh
source "$(dirname "$0")/../gpg.sh"

setup() {
  gpg_make_key "$FIXTURE/release-gnupg"
}

attempt() {
  unset GNUPGHOME
  gpg_agent_config "$FIXTURE/release-gnupg"
  capture sandbox --config "$HOST_DIR/gpg-config.json" \
    -c "GNUPGHOME='$FIXTURE/release-gnupg' $GPG_EXPORT"
  gpg_agent_stop "$FIXTURE/release-gnupg"
  refute "PRIVATE KEY BLOCK"
  expect_err "gpg: error getting the KEK: Forbidden"
}

run_attempt "$@"
