#!/usr/bin/env bash
# attempt: fill the workspace's file system, then rewrite `.git/config` in place (same size, no new block) with `core.fsmonitor`: the undo needs a new file and gets ENOSPC
# layer: the guard fails closed: the file is rewritten in place through its own descriptor (no new space), and the command is stopped (exit 125)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../helpers/small_fs.sh
source "$(dirname "$0")/../helpers/small_fs.sh"

# shellcheck disable=SC2317 # run through private_mounts
full_disk() {
  small_tmpfs "$WS" 1m
  fresh_repo "$WS"
  capture sandbox -- /bin/sh -c '
    dd if=/dev/zero of=fill bs=4k 2>/dev/null
    p="[core]
	fsmonitor = touch $PWD/../pwned-'"$TAG"'
"
    pad=$(( $(wc -c <.git/config) - ${#p} ))
    { printf "%s" "$p"; printf "#%.0s" $(seq 1 $pad); } | dd of=.git/config conv=notrunc 2>/dev/null
    sleep 2
    echo carried on'
  local host
  host="$(cd "$WS" && HOME="$FAKE_HOME" git config --get core.fsmonitor)"
  [ -z "$host" ] || { show; escaped "host git reads core.fsmonitor = $host"; }
  expect_rc 125
  refute "carried on"
  local config="$WS/.git/config" temp
  temp="$(grep -oE "write\\($WS/\\.git/\\.pi-sandbox-restore-[0-9a-f]{8}\\)" <<<"$ERR" | head -1)"
  [ -n "$temp" ] || { show; escaped "no failed write of a restore file"; }
  expect_err "pi-sandbox: undid a change to $config: it set core.fsmonitor, which is not on the allowlist of keys that run nothing; it could not be put back ($temp: ENOSPC (No space left on device)), so it was rewritten in place without it; the attempted version is kept in the quarantine: "
  expect_err "pi-sandbox: the guard could not check or undo what the command made, so the command was stopped: could not undo a change to $config: it could not be put back ($temp: ENOSPC (No space left on device)), so it was rewritten in place without it"
  # In place: the command's own edit without the key (its comment padding stays).
  { [ "$(head -1 "$config")" = "[core]" ] && ! grep -q fsmonitor "$config"; } ||
    escaped "the configuration is not the edit without the key: $(cat "$config")"
}

attempt() {
  private_mounts full_disk
}

in_private "$@"
run_attempt "$@"
