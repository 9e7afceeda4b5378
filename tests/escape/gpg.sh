# shellcheck shell=bash
# tests/escape/gpg.sh: a real gpg key and agent in the fake home, for the signing attempts
# (sourced after lib.sh and credentials.sh).

# gpg_make_key HOMEDIR: a key for escape@example.invalid made by gpg in HOMEDIR (its agent
# started there); prints nothing. Skips without gpg.
gpg_make_key() {
  if ! command -v gpg >/dev/null || ! command -v gpgconf >/dev/null; then
    skip "gnupg is not installed"
  fi
  mkdir -p "$1" && chmod 700 "$1"
  HOME="$FAKE_HOME" GNUPGHOME="$1" gpg --batch --passphrase '' --quick-gen-key \
    escape@example.invalid ed25519 sign never 2>/dev/null || skip "gpg cannot make a key here"
  HOME="$FAKE_HOME" GNUPGHOME="$1" gpgconf --kill gpg-agent
}

# gpg_agent_config HOMEDIR: starts the agent of HOMEDIR and writes a configuration allowing its
# socket to $HOST_DIR/gpg-config.json; GPG_SOCKET is the socket.
gpg_agent_config() {
  HOME="$FAKE_HOME" GNUPGHOME="$1" gpg-connect-agent /bye >/dev/null 2>&1
  GPG_SOCKET="$(HOME="$FAKE_HOME" GNUPGHOME="$1" gpgconf --list-dirs agent-socket)"
  printf '{"hostIPC": {"allowedSockets": ["%s"]}}\n' "$GPG_SOCKET" >"$HOST_DIR/gpg-config.json"
}

# gpg_agent_stop HOMEDIR: stops the agent gpg_agent_config() started.
gpg_agent_stop() {
  HOME="$FAKE_HOME" GNUPGHOME="$1" gpgconf --kill gpg-agent
}

# GPG_EXPORT: a script run inside: the secret keys through the agent, armored.
# shellcheck disable=SC2034 # used by the attempts that source this file
GPG_EXPORT='gpg --batch --export-secret-keys --armor escape@example.invalid'
