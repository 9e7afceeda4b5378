#!/usr/bin/env bash
# attempt: `chmod`, `chown` and `touch -d 2001-01-01` on /dev/null, /dev/zero, /dev/full, /dev/random, /dev/urandom and /dev/tty from inside change the host's device nodes (as root `chmod 600 /dev/full`)
# layer: mount plan: private /dev whose nodes' metadata cannot reach the host's inodes
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

NODES=(/dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty)

# shellcheck disable=SC2317 # called by the EXIT trap
# If the attempt escapes, put the host's nodes back (mode, owner, times) before failing.
restore() {
  local n mode owner mtime
  for n in "${NODES[@]}"; do
    [ -e "$n" ] || continue
    read -r mode owner mtime <<<"${SAVED[$n]}"
    [ "$(stat -c '%a %u:%g %.9Y' "$n")" = "$mode $owner $mtime" ] && continue
    echo "restoring $n ($(stat -c '%a %u:%g %y' "$n"))" >&2
    chmod "$mode" "$n" 2>/dev/null
    chown "$owner" "$n" 2>/dev/null
    touch -m -d "@$mtime" "$n" 2>/dev/null
  done
}

attempt() {
  declare -gA SAVED
  local n script=""
  for n in "${NODES[@]}"; do
    [ -e "$n" ] || continue
    SAVED[$n]="$(stat -c '%a %u:%g %.9Y' "$n")"
    # chmod to the node's own mode for all but /dev/full: the call is refused or not,
    # and a mistake cannot break the host's /dev/null for everyone else meanwhile.
    if [ "$n" = /dev/full ]; then
      script+="try chmod 600 $n"$'\n'
    else
      script+="try chmod $(stat -c %a "$n") $n"$'\n'
    fi
    script+="try chown $(id -u):$(id -g) $n"$'\n'"try touch -d 2001-01-01 $n"$'\n'
  done
  trap restore EXIT
  inside_try "$script"
  expect_rc 0
  for n in "${NODES[@]}"; do
    [ -e "$n" ] || continue
    # touch opens the node first: /dev/tty without a controlling terminal says ENXIO when
    # the fallback utimensat() is refused too (on the host, that fallback succeeds).
    expect_refused "touch -d 2001-01-01 $n" "Read-only file system" "Operation not permitted" \
      "No such device or address"
    expect_refused "chown $(id -u):$(id -g) $n" "Read-only file system" "Operation not permitted"
  done
  expect_refused "chmod 600 /dev/full" "Read-only file system" "Operation not permitted"
  expect_refused "chmod $(stat -c %a /dev/null) /dev/null" "Read-only file system" \
    "Operation not permitted"
}

run_attempt "$@"
