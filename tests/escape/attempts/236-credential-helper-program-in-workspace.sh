#!/usr/bin/env bash
# attempt: the user's `~/.gitconfig` names a credential helper kept in the workspace (`helper = ~/dotfiles/bin/...`, here `$WS/bin/git-credential-team`); a command rewrites that program, reaches an allowed host and asks for its credential: the host's `git credential fill` runs it on the host
# layer: session: every `credential.helper` program (and absolute path among its words, and their `#!` interpreters) must lie outside the command's writable areas, else the request is refused before any question
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '[credential]\n\thelper = %s/bin/git-credential-team\n' "$WS" >>"$FAKE_HOME/.gitconfig"
  printf '{"network": {"allowedDomains": ["git.example.com"]}}\n' >"$HOST_DIR/config.json"
  printf '#!/bin/sh\ncat >/dev/null\necho "{\\"outcome\\":\\"allow\\",\\"risk_level\\":\\"low\\",\\"rationale\\":\\"ok\\"}"\n' >"$HOST_DIR/allow"
  chmod +x "$HOST_DIR/allow"
}

attempt() {
  local marker="$HOST_DIR/credential-helper-ran-on-host"
  # A parent proxy (refusing) lets the destination be decided without a name lookup: the
  # command has then been allowed to connect to git.example.com:443.
  capture env HTTPS_PROXY=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 \
    HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" \
    --config "$HOST_DIR/config.json" --reviewer "$HOST_DIR/allow" \
    -c "mkdir -p bin; printf '#!/bin/sh\ntouch $marker\necho username=u\necho password=p\n' > bin/git-credential-team; chmod +x bin/git-credential-team
curl -s -o /dev/null -x \"\$HTTP_PROXY\" https://git.example.com/
printf 'protocol=https\nhost=git.example.com\n\n' | git credential fill"
  host_absent "$marker"
  refute "password=p"
  expect_rc 128
  expect_err "pi-sandbox: credential: refused https://git.example.com: the host's git credential helper \`$WS/bin/git-credential-team\`: its program $WS/bin/git-credential-team lies in $WS, where sandboxed commands can write"
}

run_attempt "$@"
