#!/usr/bin/env bash
# attempt: `cp /usr/bin/id s && chmod 4755 s` (and `chmod g+s`) inside, for any local user to run the file on the host as the workspace's owner
# layer: seccomp refuses the mode bits; the guard clears any S_ISUID or S_ISGID it finds on a file the command made or changed
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try "
mkdir -p a/b/c
cp /usr/bin/id a/b/c/s && cp /usr/bin/id g
try chmod 4755 a/b/c/s
try chmod g+s g"
  expect_rc 0
  local f mode
  for f in a/b/c/s g; do
    mode="$(stat -c %a "$WS/$f")"
    [ "$mode" = 755 ] || escaped "$f is mode $mode after the command"
  done
  # Refused inside, or cleared by the guard and said so.
  grep -qxF "DONE: chmod 4755 a/b/c/s" <<<"$OUT" &&
    expect_err "pi-sandbox: cleared the setuid bit of $WS/a/b/c/s"
  return 0
}

run_attempt "$@"
