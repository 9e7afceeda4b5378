#!/usr/bin/env bash
# attempt: copy `touch` and `cat` into a memfd and exec it (a binary that exists on no filesystem), to write outside the workspace or read the hidden home
# layer: all layers persist across exec (no_new_privs, seccomp, Landlock, mounts)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -- "$PY" -c '
import os, subprocess, sys
def memfd_copy(path):
    fd = os.memfd_create("x", 0)
    with open(path, "rb") as f:
        os.write(fd, f.read())
    return "/proc/self/fd/%d" % fd
touch = memfd_copy("/usr/bin/touch")
cat = memfd_copy("/bin/cat")
for target in ["/etc/pwned-" + sys.argv[1], sys.argv[2] + "/.git/hooks/pre-commit"]:
    r = subprocess.run([touch, target], pass_fds=[int(touch.rsplit("/", 1)[1])], capture_output=True, text=True)
    print("touch", target, r.returncode, r.stderr.strip())
r = subprocess.run([cat, "/proc/self/status", sys.argv[3] + "/.ssh/id_ed25519"], pass_fds=[int(cat.rsplit("/", 1)[1])], capture_output=True, text=True)
print(r.stdout + r.stderr)' "$TAG" "$WS" "$FAKE_HOME"
  expect_rc 0
  refute "$FAKE_KEY_MARKER"
  expect_out "Read-only file system" "NoNewPrivs:	1" "Seccomp:	2"
  grep -q "^touch /etc/pwned-$TAG 1 .*Read-only file system" <<<"$OUT" || { show; escaped "touch /etc not refused"; }
  grep -q "^touch $WS/.git/hooks/pre-commit 1 .*Read-only file system" <<<"$OUT" || { show; escaped "touch .git/hooks/pre-commit not refused"; }
  host_absent "/etc/pwned-$TAG" "$WS/.git/hooks/pre-commit"
}

run_attempt "$@"
