#!/usr/bin/env bash
# attempt: `git init sub`, fill the workspace's file system, then write `core.fsmonitor` into the new repository's config in place (no new block): cleaning it needs a new file and gets ENOSPC
# layer: the guard fails closed: the configuration is rewritten in place without the key (no new space) and the command is stopped
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/small_fs.sh
source "$(dirname "$0")/../helpers/small_fs.sh"

# shellcheck disable=SC2317 # run through private_mounts
full_disk() {
  small_tmpfs "$WS" 1m
  fresh_repo "$WS"
  # The new repository's configuration is rewritten in place (no new block) once the disk is
  # full, so that cleaning it needs a new file and gets ENOSPC.
  capture sandbox -- /bin/sh -c '
    git init -q sub && printf "#%.0s" $(seq 1 200) >>sub/.git/config && echo >>sub/.git/config
    dd if=/dev/zero of=fill bs=4k 2>/dev/null
    p="[core]
	fsmonitor = touch $PWD/../pwned-'"$TAG"'
"
    pad=$(( $(wc -c <sub/.git/config) - ${#p} ))
    { printf "%s" "$p"; printf "#%.0s" $(seq 1 $pad); } | dd of=sub/.git/config conv=notrunc 2>/dev/null
    sleep 2
    echo carried on'
  local host config="$WS/sub/.git/config" temp
  host="$(cd "$WS/sub" && HOME="$FAKE_HOME" git config --get core.fsmonitor)"
  [ -z "$host" ] || { show; escaped "host git in sub reads core.fsmonitor = $host"; }
  expect_rc 125
  refute "carried on"
  temp="$(grep -oE "write\\($WS/sub/\\.git/\\.pi-sandbox-restore-[0-9a-f]{8}\\)" <<<"$ERR" | head -1)"
  [ -n "$temp" ] || { show; escaped "no failed write of a cleaned file"; }
  expect_err "pi-sandbox: cleaned $config in a repository the command created: it set core.fsmonitor, which is not on the allowlist of keys that run nothing; it could not be put back ($temp: ENOSPC (No space left on device)), so it was rewritten in place without it; the original is kept in the quarantine: "
  expect_err "pi-sandbox: the guard could not check or undo what the command made, so the command was stopped: could not undo a change to $config: it could not be put back ($temp: ENOSPC (No space left on device)), so it was rewritten in place without it"
  { [ "$(head -1 "$config")" = "[core]" ] && ! grep -q fsmonitor "$config"; } ||
    escaped "the configuration is not the command's edit without the key: $(cat "$config")"
}

attempt() {
  private_mounts full_disk
}

in_private "$@"
run_attempt "$@"
