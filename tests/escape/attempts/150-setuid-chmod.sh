#!/usr/bin/env bash
# attempt: leave a setuid or setgid program in the workspace, which the host's mount honours (`chmod 4755`, `chmod u+s`, `chmod g+s`, Python's `os.chmod`, `fchmod`, `fchmodat2` by number)
# layer: seccomp (`chmod`, `fchmod`, `fchmodat`, `fchmodat2` with S_ISUID or S_ISGID → EPERM)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try 'for f in s1 s2 s3 s4 s5 s6 s7 s8; do cp /usr/bin/id "$f"; done
try chmod 4755 s1
try chmod u+s s2
try chmod g+s s3
try chmod 6755 s4
try chmod 755 s5'
  expect_rc 0
  expect_refused "chmod 4755 s1" "Operation not permitted"
  expect_refused "chmod u+s s2" "Operation not permitted"
  expect_refused "chmod g+s s3" "Operation not permitted"
  expect_refused "chmod 6755 s4" "Operation not permitted"
  expect_done "chmod 755 s5"
  inside_sc "chmod:$WS/s6,4755" "fchmod:$WS/s7,2755" "fchmodat2:$WS/s8,4755" "chmod:$WS/s8,0700"
  expect_rc 0
  expect_sc "chmod:$WS/s6,4755" "EPERM (Operation not permitted)"
  expect_sc "fchmod:$WS/s7,2755" "EPERM (Operation not permitted)"
  # ENOSYS only on a kernel before 6.6, which has no fchmodat2 to refuse.
  expect_sc "fchmodat2:$WS/s8,4755" "EPERM (Operation not permitted)" "ENOSYS"
  expect_sc "chmod:$WS/s8,0700" OK
  host_no_setid "$WS"
  [ "$(stat -c %a "$WS/s5") $(stat -c %a "$WS/s8")" = "755 700" ] ||
    escaped "an ordinary chmod did not reach the host: $(stat -c %a "$WS/s5" "$WS/s8")"
}

run_attempt "$@"
