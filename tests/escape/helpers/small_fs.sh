# shellcheck shell=bash
# tests/escape/helpers/small_fs.sh: part of an attempt run in a private mount namespace (and a
# user namespace when not root: `unshare -Urm`, pi-sandbox runs in it as its root) in which a
# directory of the fixture is a small tmpfs: a file system that fills up, or that is not the
# one the fake home (and its quarantine) lies on, without touching the machine's. Sourced by
# attempts after lib.sh.

# private_mounts FUNC: runs FUNC (a function of the attempt) in that namespace, through
# `bash $0 in-private FUNC`; the attempt calls `in_private "$@"` before run_attempt. Its exit
# (escaped, skip) is the attempt's.
private_mounts() {
  local flags=(-m)
  [ "$(id -u)" = 0 ] || flags=(-Urm)
  command -v unshare >/dev/null || skip "unshare(1) is not installed"
  unshare "${flags[@]}" --propagation private bash "$0" in-private "$1" || exit $?
}

in_private() {
  [ "${1:-}" = in-private ] || return 0
  set -u
  cd "$HOST_DIR" || exit 2
  "$2"
  exit 0
}

# small_tmpfs DIR SIZE: a new tmpfs of SIZE (mount(8) size=) on DIR, made if missing.
small_tmpfs() {
  { mkdir -p "$1" && mount -t tmpfs -o "size=$2,mode=0755" tmpfs "$1" 2>/dev/null; } ||
    skip "cannot mount a tmpfs on $1 here"
}

# fresh_repo DIR: a git repository with one commit in DIR (the fixture's user and branch).
fresh_repo() {
  (cd "$1" && HOME="$FAKE_HOME" git init -q && HOME="$FAKE_HOME" git commit -q --allow-empty -m init)
}

# kib DIR: the disk usage of DIR in KiB (du -sk), 0 when it is missing.
kib() {
  if [ -e "$1" ]; then du -sk "$1" | cut -f1; else echo 0; fi
}
