# shellcheck shell=bash
# tests/escape/credentials.sh: a home holding every credential of docs/security.md,
# "Credentials", for the attempts that try to read them (sourced after lib.sh).

CREDENTIAL_MARKER="FAKE-CREDENTIAL"

# The files of the table, relative to the home (the directory rows hold one file each).
CREDENTIAL_FILES=(.ssh/id_rsa .ssh/id_ecdsa .ssh/id_ecdsa_sk .ssh/id_ed25519 .ssh/id_ed25519_sk
  .ssh/id_dsa .ssh/id_xmss .gnupg/private-keys-v1.d/ABCDEF.key .gnupg/secring.gpg
  .aws/credentials .config/gcloud/credentials.db .config/gcloud/access_tokens.db
  .config/gcloud/application_default_credentials.json
  .config/gcloud/legacy_credentials/me@example.invalid/adc.json .azure/msal_token_cache.json
  .azure/msal_token_cache.bin .azure/accessTokens.json .azure/service_principal_entries.json
  .kube/config .docker/config.json .git-credentials .netrc .config/gh/hosts.yml .pypirc
  .cargo/credentials.toml .cargo/credentials .npmrc .pi/agent/auth.json
  .claude/.credentials.json .codex/auth.json)

# plant_credentials: writes each of CREDENTIAL_FILES in the fake home, holding the marker.
plant_credentials() {
  local f
  for f in "${CREDENTIAL_FILES[@]}"; do
    mkdir -p "$(dirname "$FAKE_HOME/$f")"
    printf '%s-%s %s\n' "$CREDENTIAL_MARKER" "$TAG" "$f" >"$FAKE_HOME/$f"
  done
}

# READ_EACH: a script for `bash -c READ_EACH bash FILE...`: one line per file, "READ f: <its
# content>" or "FAILED f: <the error>".
READ_EACH='for f in "$@"; do if c=$(cat "$f" 2>&1); then echo "READ $f: $c"; else echo "FAILED $f: $c"; fi; done'

# expect_credentials_hidden PREFIX: the last capture ran READ_EACH on PREFIX/f (f when PREFIX is
# empty) for every f of
# CREDENTIAL_FILES; each must read empty (the mask of a file) or be missing (inside the mask
# of a directory), and no marker may appear.
expect_credentials_hidden() {
  local prefix="$1" f p
  refute "$CREDENTIAL_MARKER" "$FAKE_KEY_MARKER"
  for f in "${CREDENTIAL_FILES[@]}"; do
    p="${prefix:+$prefix/}$f"
    case "$f" in
      .gnupg/private-keys-v1.d/* | .config/gcloud/legacy_credentials/*)
        expect_lines "FAILED $p: cat: $p: No such file or directory" ;;
      *) expect_lines "READ $p: " ;;
    esac
  done
}
