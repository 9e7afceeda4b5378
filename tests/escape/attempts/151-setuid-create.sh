#!/usr/bin/env bash
# attempt: create a setuid or setgid file in the workspace (`open(O_CREAT)`, `creat`, `O_TMPFILE` then `linkat`, `mknod` of a regular file, `openat2`, `install -m 4755`, `cp -p` and `tar -xp` of a setuid program from the host)
# layer: seccomp (`open`, `openat`, `creat`, `mknod`, `mknodat` with S_ISUID or S_ISGID → EPERM; `openat2` → ENOSYS; `chmod` and `fchmod` of those bits → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$HOST_DIR/bits"
  cp /usr/bin/id "$HOST_DIR/bits/suid"
  cp /usr/bin/id "$HOST_DIR/bits/sgid"
  chmod 4755 "$HOST_DIR/bits/suid"
  chmod 2755 "$HOST_DIR/bits/sgid"
}

attempt() {
  inside_sc "create:$WS/c1,4755" "openat:$WS/c2,2755" "creat:$WS/c4,6755" "tmpfile:$WS/t1,4755" \
    "mknodreg:$WS/m1,4755" "openat2:$WS/o1,4755" "create:$WS/c3,0755"
  expect_rc 0
  expect_sc "create:$WS/c1,4755" "EPERM (Operation not permitted)"
  expect_sc "creat:$WS/c4,6755" "EPERM (Operation not permitted)"
  expect_sc "openat:$WS/c2,2755" "EPERM (Operation not permitted)"
  expect_sc "tmpfile:$WS/t1,4755" "EPERM (Operation not permitted)"
  expect_sc "mknodreg:$WS/m1,4755" "EPERM (Operation not permitted)"
  expect_sc "openat2:$WS/o1,4755" "ENOSYS (Function not implemented)"
  expect_sc "create:$WS/c3,0755" OK
  inside_try "try install -m 4755 /usr/bin/id i1
try cp -p $HOST_DIR/bits/suid cp1
try cp -a $HOST_DIR/bits/sgid cp2
mkdir x && tar -C $HOST_DIR/bits -cf /tmp/bits.tar suid sgid && try tar -C x -xpf /tmp/bits.tar"
  expect_rc 0
  expect_refused "install -m 4755 /usr/bin/id i1" "Operation not permitted"
  expect_refused "cp -p $HOST_DIR/bits/suid cp1" "Operation not permitted"
  expect_refused "cp -a $HOST_DIR/bits/sgid cp2" "Operation not permitted"
  expect_refused "tar -C x -xpf /tmp/bits.tar" "Operation not permitted"
  host_no_setid "$WS"
  host_absent "$WS/c1" "$WS/c2" "$WS/c4" "$WS/t1" "$WS/m1" "$WS/o1"
}

run_attempt "$@"
