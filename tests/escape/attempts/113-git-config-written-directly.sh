#!/usr/bin/env bash
# attempt: write `.git/config` directly in spellings git accepts and a naive reader may not (`[core]fsmonitor=` on the header line, `[CORE]` with `FsMonitor`, a UTF-8 BOM, CRLF line ends, a continuation line, quotes and escapes, `[includeIf "gitdir:/"]`, an `ext::` remote), or change the value of a dangerous key the user set (`core.editor`, `alias.co`)
# layer: the guard: `.git/config` parsed as git parses it; a dangerous entry that is new or has a new value is undone
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  HOME="$FAKE_HOME" git -C "$WS" config core.editor true
  HOME="$FAKE_HOME" git -C "$WS" config alias.co checkout
}

attempt() {
  local p="$HOST_DIR/pwned-$TAG" i
  # One variant per run; each appended to the original configuration.
  local variants=(
    "[core]fsmonitor=touch $p-1"
    "[CORE]\n\tFsMonitor = \"touch $p-2\""
    "[core]\r\n\tfsmonitor = touch $p-3\r\n"
    "[core]\n\tfsmonitor = touch \\\\\n$p-4"
    "[core]\n\tfsmonitor = \"to\"uch' '$p-5 ; comment"
    "[includeIf \"gitdir:/\"]\n\tpath = ../evil-include"
    "[remote \"x\"]\n\turl = ext::sh -c touch% $p-7"
    "[core]\n\teditor = touch $p-8"
    "[alias]\n\tco = !touch $p-9"
    "[core \"\"]\n[core]\n# x\n\n\tfsmonitor=touch $p-10"
  )
  printf '[core]\n\tfsmonitor = touch %s-6\n' "$p" >"$WS/evil-include"
  for i in "${!variants[@]}"; do
    # Written beside it in .git and renamed over it, as git does (a rename from the workspace
    # root crosses a mount: mv would truncate and rewrite it in place).
    capture sandbox -c "cp .git/config .git/c.tmp && printf '%b\n' '${variants[$i]//\'/\'\\\'\'}' >> .git/c.tmp && mv .git/c.tmp .git/config"
    expect_rc 0
    expect_err "pi-sandbox: undid a change to $WS/.git/config: "
  done
  # A BOM before everything.
  capture sandbox -c "{ printf '\xef\xbb\xbf[core]\n\tfsmonitor = touch $p-11\n'; cat .git/config; } > .git/c.tmp && mv .git/c.tmp .git/config"
  expect_err "pi-sandbox: undid a change to $WS/.git/config: "
  [ "$(HOME="$FAKE_HOME" git -C "$WS" config core.editor)" = true ] || escaped "core.editor changed"
  # Host git in a copy of the workspace (the include target beside it): git writes FETCH_HEAD
  # and HEAD, which the snapshot of the workspace's .git would see.
  cp -a "$WS" "$HOST_DIR/ws-copy"
  rm -f "$WS/evil-include"
  local copy="$HOST_DIR/ws-copy"
  HOME="$FAKE_HOME" git -C "$copy" status >/dev/null 2>&1
  HOME="$FAKE_HOME" git -C "$copy" fetch -q x >/dev/null 2>&1
  HOME="$FAKE_HOME" GIT_EDITOR= EDITOR= VISUAL= git -C "$copy" commit -q --allow-empty >/dev/null 2>&1
  HOME="$FAKE_HOME" git -C "$copy" co -q main >/dev/null 2>&1
  host_absent "$p"-{1..11}
}

run_attempt "$@"
