#!/usr/bin/env bash
# attempt: ~/.gitconfig holds a password in a subsection name (`[url "https://u:TOKEN@host/"] insteadOf`), in `http.proxy`, `sendemail.smtpPass` and `github.token`: read them from a workspace that is the home
# layer: mount plan: ~/.gitconfig is a read-only copy without the URLs' user information and the keys named pass, token, secret or auth
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  local t="gitconfig-secret-$TAG"
  printf '[url "https://u:%s-1@git.test/"]\n\tinsteadOf = https://git.test/\n[http]\n\tproxy = http://u:%s-2@proxy.test:3128\n[sendemail]\n\tsmtpPass = %s-3\n[github]\n\ttoken = %s-4\n' \
    "$t" "$t" "$t" "$t" >>"$FAKE_HOME/.gitconfig"
}

attempt() {
  capture sandbox_home -c 'cat ~/.gitconfig; git config --list --show-origin'
  refute "gitconfig-secret-$TAG"
  expect_lines '[url "https://git.test/"]' '	proxy = http://proxy.test:3128'
  expect_rc 0
}

run_attempt "$@"
