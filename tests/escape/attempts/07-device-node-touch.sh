#!/usr/bin/env bash
# attempt: `touch /dev/null` (and the other device nodes) from inside moves the host node's mtime; the devices themselves must keep working
# layer: mount plan: private /dev (nodes usable, their inodes' metadata not writable)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  local before n
  before="$(stat -c '%n %.9Y %.9Z' /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty 2>/dev/null)"
  # touch may work on a private node or be refused: what matters is the host's node.
  capture sandbox -c 'for n in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty; do
  [ -e "$n" ] && touch "$n" 2>/dev/null
done
echo x > /dev/null && echo null-write-ok
[ "$(head -c 3 /dev/zero | od -An -tx1 | tr -d " ")" = 000000 ] && echo zero-read-ok
head -c 16 /dev/urandom | wc -c
echo x > /dev/full || echo full-refused'
  expect_rc 0
  expect_lines null-write-ok zero-read-ok 16 full-refused
  expect_err "No space left on device"
  local changed=""
  for n in /dev/null /dev/zero /dev/full /dev/random /dev/urandom /dev/tty; do
    [ -e "$n" ] || continue
    # ctime: touch moves it, and nothing but a metadata change does (a write to a tty
    # moves /dev/tty's mtime).
    if [ "$(grep "^$n " <<<"$before" | cut -d' ' -f3)" != "$(stat -c '%.9Z' "$n")" ]; then
      changed+="$n: $(grep "^$n " <<<"$before" | cut -d' ' -f2) -> $(stat -c '%.9Y' "$n"); "
      touch -m -d "@$(grep "^$n " <<<"$before" | cut -d' ' -f2)" "$n" 2>/dev/null
    fi
  done
  [ -z "$changed" ] || escaped "the host's nodes changed (mtime put back): $changed"
}

run_attempt "$@"
