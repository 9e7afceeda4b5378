#!/usr/bin/env bash
# attempt: `git init sub`, set `core.fsmonitor` in its config, then fill the workspace's file system: cleaning the new repository's configuration after the command needs a new file and gets ENOSPC
# layer: the last sweep fails closed: the configuration is rewritten in place without the key (no new space)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/small_fs.sh
source "$(dirname "$0")/../helpers/small_fs.sh"

# shellcheck disable=SC2317 # run through private_mounts
full_disk() {
  small_tmpfs "$WS" 1m
  fresh_repo "$WS"
  capture sandbox -- /bin/sh -c 'git init -q sub && git -C sub config core.fsmonitor "touch $PWD/../pwned-'"$TAG"'" &&
    dd if=/dev/zero of=fill bs=4k 2>/dev/null; echo done'
  local host config="$WS/sub/.git/config" temp
  host="$(cd "$WS/sub" && HOME="$FAKE_HOME" git config --get core.fsmonitor)"
  [ -z "$host" ] || { show; escaped "host git in sub reads core.fsmonitor = $host"; }
  expect_rc 0
  temp="$(grep -oE "write\\($WS/sub/\\.git/\\.pi-sandbox-restore-[0-9a-f]{8}\\)" <<<"$ERR" | head -1)"
  [ -n "$temp" ] || { show; escaped "no failed write of a cleaned file"; }
  expect_err "pi-sandbox: cleaned $config in a repository the command created: it set core.fsmonitor, which is not on the allowlist of keys that run nothing; it could not be put back ($temp: ENOSPC (No space left on device)), so it was rewritten in place without it; the original is kept in the quarantine: "
  expect_err "pi-sandbox: warning: the guard's last sweep could not check or undo everything (could not undo a change to $config: it could not be put back ($temp: ENOSPC (No space left on device)), so it was rewritten in place without it); "
  [ "$(cd "$WS/sub" && HOME="$FAKE_HOME" git config --get core.repositoryformatversion)" = 0 ] ||
    escaped "the rest of the configuration is gone: $(cat "$config")"
}

attempt() {
  private_mounts full_disk
}

in_private "$@"
run_attempt "$@"
