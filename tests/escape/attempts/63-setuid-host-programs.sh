#!/usr/bin/env bash
# attempt: the host's setuid-root programs (`passwd -S`, which needs root to read /etc/shadow; `su`, `mount`) run inside to gain root
# layer: no_new_privs and the nosuid host view
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  [ -u /usr/bin/passwd ] || skip "/usr/bin/passwd is not setuid here"
  capture sandbox -c 'grep NoNewPrivs /proc/self/status
findmnt -no OPTIONS -T /usr/bin/passwd | tr , "\n" | grep -x nosuid
echo "passwd-S: $(passwd -S "$(id -un)" 2>&1 | head -1)"
su -c "echo SU-RAN" root </dev/null 2>&1 | head -1'
  expect_lines "NoNewPrivs:	1" nosuid
  refute SU-RAN
  if [ "$(id -u)" != 0 ]; then
    # Only the setuid bit lets an unprivileged user read /etc/shadow: `passwd -S` then
    # prints the shadow fields (a date, ages); without it, the status alone.
    grep -Eq '^passwd-S: [^ ]+ [A-Z]+$|^passwd-S: .*(Permission denied|Authentication token)' <<<"$OUT" ||
      { show; escaped "passwd -S read the shadow file: setuid worked"; }
  fi
}

run_attempt "$@"
