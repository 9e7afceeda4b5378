#!/usr/bin/env bash
# attempt: the user's `~/.gitconfig` includes a file of the workspace (a dotfiles repository as the workspace); a command writes `credential.helper = !program` there, reaches an allowed host and asks for its credential: the host's `git credential fill` runs the command's program on the host
# layer: session: every file the host's git configuration is read from (origins and `include`/`includeIf` targets) must lie outside the command's writable areas, else the request is refused before any question
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  printf '[include]\n\tpath = ~/ws/dotfiles.gitconfig\n' >>"$FAKE_HOME/.gitconfig"
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
    -c "printf '[credential]\n\thelper = \"!touch $marker; echo username=u; echo password=p; true\"\n' > dotfiles.gitconfig
curl -s -o /dev/null -x \"\$HTTP_PROXY\" https://git.example.com/
printf 'protocol=https\nhost=git.example.com\n\n' | git credential fill"
  host_absent "$marker"
  refute "password=p"
  expect_rc 128
  expect_err "pi-sandbox: credential: refused https://git.example.com: the host's git configuration is read from $WS/dotfiles.gitconfig, which the command can write"
}

run_attempt "$@"
