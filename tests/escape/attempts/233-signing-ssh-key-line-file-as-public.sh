#!/usr/bin/env bash
# attempt: git signs with ssh (gpg.format=ssh in the user's configuration); a command leaves the repository's user.signingKey (on the guard's allowlist) naming a hidden home file that only looks like a key line, `ssh-ed25519 <token> <secret>` (~/.config/svc/credentials); read it in the next command
# layer: session: the signing key file is shown only when it is named `*.pub` and its base64 decodes to a key of the type it names (docs/security.md, "Signed commits")
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../credentials.sh
source "$(dirname "$0")/../credentials.sh"

setup() {
  mkdir -p "$FAKE_HOME/.config/svc"
  # One line: a key type, a base64 word of 40 characters (the token), the secret as the comment.
  printf 'ssh-ed25519 c2VydmljZS10b2tlbi0xMjM0NTY3ODkwYWJjZGVm %s-%s\n' "$CREDENTIAL_MARKER" "$TAG" \
    >"$FAKE_HOME/.config/svc/credentials"
  chmod 600 "$FAKE_HOME/.config/svc/credentials"
  printf '[gpg]\n\tformat = ssh\n' >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  local file="$FAKE_HOME/.config/svc/credentials"
  # user.* is on the guard's allowlist: a command may leave any file named as the repository's
  # signing key for the next one (done here on the host, the repository's config put back after).
  cp "$WS/.git/config" "$HOST_DIR/repo-config"
  git -C "$WS" config user.signingKey "~/.config/svc/credentials"
  capture sandbox -- /bin/bash -c "$READ_EACH" bash "$file"
  cp "$HOST_DIR/repo-config" "$WS/.git/config"
  refute "$CREDENTIAL_MARKER"
  expect_lines "FAILED $file: cat: $file: No such file or directory"
}

run_attempt "$@"
