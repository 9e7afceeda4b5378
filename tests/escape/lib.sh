# shellcheck shell=bash
# tests/escape/lib.sh: the fixture, the host-state snapshot and the helpers of the escape
# battery. Sourced by tests/escape/run (fixture_create, snapshot, fixture_remove) and by
# every attempt (sandbox, capture, expect_*, escaped, skip, host_*).
#
# An attempt is `bash attempts/NN-name.sh [setup]`, run by tests/escape/run with:
#   PI_BIN      the pi-sandbox binary under test (outside the fake home)
#   FIXTURE     a fresh mktemp -d holding everything below (in $PI_SANDBOX_TEST_TMPDIR, else
#               ~/.cache/pi-sandbox-tests)
#   FAKE_HOME   $FIXTURE/home: a realistic home (~/.gitconfig, ~/.ssh/id_ed25519, ...)
#   WS          $FAKE_HOME/ws: a git repository with one commit (the usual workspace)
#   HOST_DIR    $FIXTURE/host: scratch space on the host, outside the home and the workspace
#   TAG         a number unique to this attempt: markers, canaries (`sleep $TAG`)
#   ESCAPE_DIR  tests/escape
# It defines attempt() (and optionally setup(), run on the host before the "before"
# snapshot) and ends with `run_attempt "$@"`. Exit: 0 stopped as expected, 1 escaped (or
# the outcome was not the exact expected one), 77 skipped (kernel or machine lacks
# something; the reason on stderr).

PY=/usr/bin/python3          # never a shim under a home: the homes are hidden inside
FAKE_KEY_MARKER="FAKE-PRIVATE-KEY-MATERIAL"

# ---------------------------------------------------------------------------------------
# For attempts

# sandbox ARGS...: pi-sandbox run in the workspace with the fake home, never asking.
sandbox() {
  HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$WS" "$@"
}

# sandbox_home ARGS...: the same with the workspace = the home itself.
sandbox_home() {
  HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$FAKE_HOME" "$@"
}

# sandbox_strict ARGS...: `sandbox` with `filesystem.protection: "strict"` in a trusted
# configuration file: missing protected names held by read-only placeholders for the length
# of the command, instead of the guard (the default) moving them to the quarantine.
sandbox_strict() {
  local config="$HOST_DIR/strict-config.json"
  [ -f "$config" ] || echo '{"filesystem": {"protection": "strict"}}' >"$config"
  HOME="$FAKE_HOME" "$PI_BIN" run --config "$config" --no-prompt --cwd "$WS" "$@"
}

# The quarantine of the fake home, where the guard moves what a command made at a guarded
# name (one directory per entry: record.json and the item under its own name).
quarantine_dir() {
  echo "$FAKE_HOME/.local/state/pi-sandbox/quarantine"
}

# capture COMMAND...: runs it; sets RC, OUT (stdout) and ERR (stderr).
capture() {
  local o="$HOST_DIR/.capture.out" e="$HOST_DIR/.capture.err"
  RC=0
  "$@" >"$o" 2>"$e" </dev/null || RC=$?
  OUT="$(cat "$o")"
  ERR="$(cat "$e")"
}

# show: the last capture, for a diagnostic.
show() {
  printf '  exit %s\n  stdout: %s\n  stderr: %s\n' "$RC" "${OUT:0:1500}" "${ERR:0:1500}" >&2
}

escaped() {
  echo "ESCAPED: $*" >&2
  exit 1
}
skip() {
  echo "$*" >&2
  exit 77
}

# expect_rc N...: the last capture exited with one of these codes.
expect_rc() {
  local want
  for want in "$@"; do [ "$RC" = "$want" ] && return 0; done
  show
  escaped "exit $RC, expected $*"
}

# expect_err TEXT...: stderr of the last capture contains one of these fixed strings.
expect_err() {
  local t
  for t in "$@"; do case "$ERR" in *"$t"*) return 0 ;; esac; done
  show
  escaped "stderr has none of: $*"
}

# expect_out TEXT...: stdout of the last capture contains every one of these fixed strings.
expect_out() {
  local t
  for t in "$@"; do
    case "$OUT" in *"$t"*) ;; *) show; escaped "stdout lacks: $t" ;; esac
  done
}

# refute TEXT...: neither stdout nor stderr of the last capture contains any of these.
refute() {
  local t
  for t in "$@"; do
    case "$OUT$ERR" in *"$t"*) show; escaped "output contains: $t" ;; esac
  done
}

# expect_lines TEXT...: stdout has each TEXT as a whole line (order free).
expect_lines() {
  local t
  for t in "$@"; do
    grep -qxF -- "$t" <<<"$OUT" || { show; escaped "stdout lacks the line: $t"; }
  done
}

# Refusals a command sees when a write or a privileged call is stopped.
REFUSED=("Read-only file system" "Operation not permitted" "Permission denied")

# TRY_PRELUDE: put before a command run inside with -c; then `try CMD...` and
# `try_write FILE [CONTENT]` (printf %b; default "pwned") print one line each: "DONE: CMD" or "REFUSED: CMD :: its message".
TRY_PRELUDE='try() { local o; if o=$("$@" 2>&1 </dev/null); then echo "DONE: $*"; else echo "REFUSED: $* :: ${o//$'"'"'\n'"'"'/ }"; fi; }
try_write() { local o; if o=$({ printf "%b" "${2:-pwned\\n}" >"$1"; } 2>&1); then echo "DONE: write $1"; else echo "REFUSED: write $1 :: ${o//$'"'"'\n'"'"'/ }"; fi; }
'

# inside_try SCRIPT [RUNNER]: captures `RUNNER -c "$TRY_PRELUDE SCRIPT"` (RUNNER: sandbox).
inside_try() {
  capture "${2:-sandbox}" -c "$TRY_PRELUDE$1"
}

# expect_refused 'CMD' [TEXT...]: the try of CMD in the last capture was refused with a
# message containing one of TEXTs (default: the REFUSED texts).
expect_refused() {
  local what="$1" line t
  shift
  [ $# -gt 0 ] || set -- "${REFUSED[@]}"
  if grep -qxF -- "DONE: $what" <<<"$OUT"; then show; escaped "succeeded inside: $what"; fi
  line="$(grep -F -- "REFUSED: $what :: " <<<"$OUT" | head -1)"
  [ -n "$line" ] || { show; escaped "no result for: $what"; }
  for t in "$@"; do case "$line" in *"$t"*) return 0 ;; esac; done
  show
  escaped "refused, but not with one of ($*): $line"
}

# expect_done 'CMD': the try of CMD in the last capture succeeded.
expect_done() {
  grep -qxF -- "DONE: $1" <<<"$OUT" || { show; escaped "expected to work inside: $1"; }
}

# expect_names_uncreatable NAME...: each NAME (relative to the workspace root) cannot be
# created, with the guard (sandbox) and then with placeholders (sandbox_strict): see
# expect_uncreatable. Between the two, the ordinary parents the guard kept (`.pi`, `.claude`:
# empty directories it did not need to move) are removed, so that the next snapshot does not
# see them.
expect_names_uncreatable() {
  local paths=() n top
  for n in "$@"; do paths+=("$WS/$n"); done
  expect_uncreatable sandbox "${paths[@]}"
  for n in "$@"; do
    top="${n%%/*}"
    [ "$top" != "$n" ] && rmdir "$WS/$top" 2>/dev/null
  done
  expect_uncreatable sandbox_strict "${paths[@]}"
}

# expect_uncreatable RUNNER PATH...: inside (RUNNER: sandbox, sandbox_home or
# sandbox_strict), creates each PATH (`mkdir -p` of its parent, then a write); each must be
# absent from the host afterwards, where a host program would read it. With sandbox_strict
# (placeholders) every creation must fail with a refusal on stderr. Otherwise (the guard) a
# creation may succeed inside, but then the path or one of its parents must have been moved
# to the quarantine (expect_quarantined); a creation that failed needs either that or a
# refusal on stderr (a read-only directory of the home workspace).
expect_uncreatable() {
  local runner="$1" f q entries
  shift
  entries="$(ls -A "$(quarantine_dir)" 2>/dev/null)"
  capture "$runner" -- /bin/bash -c 'for f in "$@"; do
  mkdir -p "$(dirname "$f")"
  if printf "pwned\n" >"$f"; then echo "CREATED $f"; else echo "REFUSED $f"; fi
done' bash "$@"
  for f in "$@"; do
    host_absent "$f"
    if [ "$runner" = sandbox_strict ]; then
      grep -qxF "REFUSED $f" <<<"$OUT" || { show; escaped "created inside: $f"; }
      continue
    fi
    q="$(quarantined_ancestor "$f")"
    if [ -n "$q" ]; then
      expect_quarantined "$q"
    else
      grep -qxF "REFUSED $f" <<<"$OUT" || { show; escaped "created inside and not quarantined: $f"; }
    fi
  done
  if [ "$runner" = sandbox_strict ] || grep -q '^REFUSED ' <<<"$OUT"; then
    expect_err "${REFUSED[@]}" "Is a directory" "Device or resource busy" "No such file or directory"
  fi
  if [ "$runner" = sandbox_strict ]; then
    refute "to the quarantine"
    [ "$(ls -A "$(quarantine_dir)" 2>/dev/null)" = "$entries" ] || escaped "strict mode quarantined something"
  fi
}

# quarantined_ancestor PATH: PATH or its nearest parent that a `moved P to the quarantine`
# line of the last capture names (empty when none does).
quarantined_ancestor() {
  local p="$1"
  while [ -n "$p" ] && [ "$p" != / ]; do
    if grep -qF -- "pi-sandbox: moved $p to the quarantine (" <<<"$ERR"; then
      echo "$p"
      return
    fi
    p="$(dirname "$p")"
  done
}

# expect_quarantined PATH...: for each PATH the last capture's stderr has the guard's line
# `pi-sandbox: moved PATH to the quarantine (...); restore with: pi-sandbox quarantine
# restore ID`, the fake home's quarantine has ID/record.json naming PATH as the original with
# the item beside it, and nothing is at PATH on the host.
expect_quarantined() {
  local p line id entry
  for p in "$@"; do
    host_absent "$p"
    line="$(grep -F -- "pi-sandbox: moved $p to the quarantine (" <<<"$ERR" | tail -1)"
    [ -n "$line" ] || { show; escaped "no quarantine line for: $p"; }
    id="${line##*pi-sandbox quarantine restore }"
    case "$id" in "" | */* | *" "*) show; escaped "no quarantine id in: $line" ;; esac
    entry="$(quarantine_dir)/$id"
    [ -f "$entry/record.json" ] || escaped "no $entry/record.json for $p"
    "$PY" - "$entry" "$p" <<'PYEOF' || escaped "the quarantine entry $id does not hold $p"
import json, os, sys
entry, original = sys.argv[1], sys.argv[2]
record = json.load(open(os.path.join(entry, "record.json")))
name = record.get("name", "")
sys.exit(0 if record.get("original") == original and name == os.path.basename(original)
         and os.path.lexists(os.path.join(entry, name)) else 1)
PYEOF
  done
}

# expect_undone PATH KEY...: the last capture's stderr has the guard's line for a git
# configuration it put back (`pi-sandbox: undid a change to PATH: it set KEYS, ...; the
# attempted version is in the quarantine: pi-sandbox quarantine restore ID`) naming each KEY,
# and the quarantine holds the attempted version under ID.
expect_undone() {
  local p="$1" line id k
  shift
  line="$(grep -F -- "pi-sandbox: undid a change to $p: " <<<"$ERR" | tr '\n' ' ')"
  [ -n "$line" ] || { show; escaped "no undo line for: $p"; }
  for k in "$@"; do
    # git's keys are case-insensitive; the guard names them in lower case.
    case "${line,,}" in *"${k,,}"*) ;; *) show; escaped "the undo lines for $p do not name $k" ;; esac
  done
  # "...; the attempted version is kept in the quarantine: <root>/<id>/<name>"
  id="${line##*kept in the quarantine: $(quarantine_dir)/}"
  id="${id%%/*}"
  [ -f "$(quarantine_dir)/$id/record.json" ] || escaped "no quarantine entry $id for the change to $p"
}

# inside_sc SPEC...: captures helpers/sc.py run inside with these checks.
inside_sc() {
  capture sandbox -- "$PY" -c "$(pysrc sc)" "$@"
}

# expect_sc SPEC RESULT...: sc.py's line for SPEC in the last capture starts with one of
# RESULTs (an errno name such as EPERM, or OK).
expect_sc() {
  local spec="$1" line r
  shift
  line="$(grep -F -- "$spec: " <<<"$OUT" | head -1)"
  [ -n "$line" ] || { show; escaped "no result for: $spec"; }
  for r in "$@"; do case "$line" in "$spec: $r"*) return 0 ;; esac; done
  show
  escaped "$line (expected $*)"
}

# under_pty SPEC...: captures sc.py run inside under a pseudo-terminal (script(1)); the
# checks see the terminal on stdin. Skips when script(1) is missing.
under_pty() {
  command -v script >/dev/null || skip "script(1) is not installed"
  {
    printf 'HOME=%q %q run --no-prompt --cwd %q -- %q -c "$(cat %q)"' "$FAKE_HOME" "$PI_BIN" \
      "$WS" "$PY" "$ESCAPE_DIR/helpers/sc.py"
    printf ' %q' "$@"
    echo
  } >"$HOST_DIR/pty.sh"
  capture script -qec "bash $HOST_DIR/pty.sh" /dev/null
  # script(1) passes the end of its own (non-terminal) stdin on as a NUL byte, which the
  # command's private terminal echoes as `^@` at the start of a line.
  OUT="$(tr -d '\r' <<<"$OUT" | sed 's/^\^@//')"
}

# proxy_refuses HOST...: with a host HTTP server on 127.0.0.1 (host_listen http), asks the
# sandbox's HTTP proxy for each HOST spelling (as in a URL: `[::1]`, `2130706433`) by
# CONNECT, by absolute-form GET, and with curl through $HTTP_PROXY: every one must get 403,
# with a refusal line from pi-sandbox, and the host server must see nothing.
proxy_refuses() {
  local specs=() h n=0
  for h in "$@"; do
    specs+=("connect $h:$LISTEN_PORT" "get http://$h:$LISTEN_PORT/")
    n=$((n + 2))
  done
  capture sandbox -- /bin/bash -c '"$0" -c "$1" "${@:2}"
curl -sS --noproxy "" -o /dev/null -w "curl => %{http_code}\n" -x "$HTTP_PROXY" "http://'"$1:$LISTEN_PORT"'/"' \
    "$PY" "$(pysrc proxy)" "${specs[@]}"
  expect_rc 0
  refute REACHED
  for h in "${specs[@]}"; do expect_lines "$h => HTTP/1.1 403 Forbidden"; done
  expect_lines "curl => 403"
  [ "$(grep -c 'pi-sandbox: network: refused' <<<"$ERR")" -ge "$n" ] ||
    { show; escaped "fewer than $n refusal lines from pi-sandbox"; }
  listen_saw_nothing
}

# host_absent PATH...: none of these exists on the host (not even a dangling link).
host_absent() {
  local p
  for p in "$@"; do
    if [ -e "$p" ] || [ -L "$p" ]; then escaped "exists on the host: $p"; fi
  done
}

# host_no_setid DIR: no file under DIR is setuid or setgid on the host.
host_no_setid() {
  local found
  found="$(find "$1" -perm /6000 -printf '%m %p\n')"
  [ -z "$found" ] || { show; escaped "setuid or setgid on the host: $found"; }
}

# host_canary: starts `sleep $TAG` on the host in its own process group; sets CANARY_PID.
# The attempt kills it on exit (trap set here).
host_canary() {
  setsid sleep "$TAG" </dev/null >/dev/null 2>&1 &
  CANARY_PID=$!
  trap 'kill -9 "$CANARY_PID" 2>/dev/null; wait "$CANARY_PID" 2>/dev/null; host_stop_all' EXIT
}
canary_alive() {
  kill -0 "$CANARY_PID" 2>/dev/null && [ "$(cat "/proc/$CANARY_PID/comm" 2>/dev/null)" = sleep ]
}

# host_listen KIND ADDR: starts helpers/listen.py on the host (KIND tcp, udp, http or
# abstract); sets LISTEN_PORT (or the abstract name) and LISTEN_LOG (one line per
# connection, datagram or request it saw). Stopped on exit.
HOST_PIDS=()
host_listen() {
  local kind="$1" addr="$2" portfile
  portfile="$(mktemp "$HOST_DIR/port.XXXXXX")"
  LISTEN_LOG="$(mktemp "$HOST_DIR/listen.XXXXXX")"
  "$PY" "$ESCAPE_DIR/helpers/listen.py" "$kind" "$addr" "$portfile" "$LISTEN_LOG" "tag=$TAG" \
    </dev/null >/dev/null 2>>"$HOST_DIR/listen.err" &
  HOST_PIDS+=($!)
  trap 'host_stop_all' EXIT
  for _ in $(seq 100); do
    [ -s "$portfile" ] && break
    sleep 0.05
  done
  [ -s "$portfile" ] || skip "cannot listen on the host: $kind $addr ($(cat "$HOST_DIR/listen.err"))"
  LISTEN_PORT="$(cat "$portfile")"
}
host_stop_all() {
  local p
  for p in "${HOST_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  HOST_PIDS=()
}
# listen_saw_nothing: the host listener recorded no connection, datagram or request.
listen_saw_nothing() {
  sleep 0.1
  if [ -s "$LISTEN_LOG" ]; then escaped "the host listener was reached: $(head -3 "$LISTEN_LOG")"; fi
}

# pysrc NAME: the source of helpers/NAME.py, to pass inline (`python3 -c "$(pysrc sc)"`):
# the battery itself may sit under a private /tmp or a hidden home, invisible inside.
pysrc() {
  cat "$ESCAPE_DIR/helpers/$1.py"
}

run_attempt() {
  set -u
  cd "$HOST_DIR" || exit 2
  if [ "${1:-}" = setup ]; then
    if declare -F setup >/dev/null; then setup; fi
    exit 0
  fi
  attempt
  exit 0
}

# ---------------------------------------------------------------------------------------
# For the runner

# Names at the workspace root whose presence and content the snapshot records (the
# protected names of docs/security.md that the attempts aim at, and tools/).
WS_WATCHED=(.gitconfig .gitmodules .bashrc .bash_profile .zshrc .zprofile .profile .ripgreprc
  .mcp.json .vscode .idea .claude .env .env.local secrets .secrets .pi tools)

# fixture_create: sets and exports FIXTURE FAKE_HOME WS HOST_DIR TAG.
fixture_create() {
  # Not under /tmp: a workspace there draws a warning on every run (docs/security.md).
  local base="${PI_SANDBOX_TEST_TMPDIR:-$HOME/.cache/pi-sandbox-tests}"
  mkdir -p "$base"
  FIXTURE="$(mktemp -d "$base/pi-escape.XXXXXX")"
  FAKE_HOME="$FIXTURE/home"
  WS="$FAKE_HOME/ws"
  HOST_DIR="$FIXTURE/host"
  TAG="$(( (RANDOM * 32768 + RANDOM) % 900000 + 7100000 ))"
  export FIXTURE FAKE_HOME WS HOST_DIR TAG
  mkdir -p "$HOST_DIR" "$FAKE_HOME"/{.ssh,.config/git,.cargo/bin,.local/bin,.pi/agent} "$WS"
  chmod 755 "$FIXTURE"
  chmod 700 "$FAKE_HOME/.ssh"
  cat >"$FAKE_HOME/.gitconfig" <<EOF
[user]
	name = Escape Battery
	email = escape@example.invalid
[init]
	defaultBranch = main
EOF
  printf '[core]\n\tautocrlf = false\n' >"$FAKE_HOME/.config/git/config"
  printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\n%s-%s\n-----END OPENSSH PRIVATE KEY-----\n' \
    "$FAKE_KEY_MARKER" "$TAG" >"$FAKE_HOME/.ssh/id_ed25519"
  chmod 600 "$FAKE_HOME/.ssh/id_ed25519"
  echo "ssh-ed25519 AAAAfake escape@example.invalid" >"$FAKE_HOME/.ssh/id_ed25519.pub"
  printf '# fake ~/.bashrc %s\nexport PS1="$ "\n' "$TAG" >"$FAKE_HOME/.bashrc"
  printf '#!/bin/sh\necho fake cargo\n' >"$FAKE_HOME/.cargo/bin/cargo"
  chmod 755 "$FAKE_HOME/.cargo/bin/cargo"
  echo '{"defaultProvider": "fake"}' >"$FAKE_HOME/.pi/agent/settings.json"
  printf '#!/bin/sh\necho fake tool\n' >"$FAKE_HOME/.local/bin/tool"
  chmod 755 "$FAKE_HOME/.local/bin/tool"
  echo "escape battery workspace" >"$WS/README.md"
  (cd "$WS" && HOME="$FAKE_HOME" git init -q && HOME="$FAKE_HOME" git add README.md \
    && HOME="$FAKE_HOME" git commit -qm init) >/dev/null
}

fixture_remove() {
  [ -n "${FIXTURE:-}" ] && [ -d "$FIXTURE" ] || return 0
  chmod -R u+rwX "$FIXTURE" 2>/dev/null
  rm -rf "$FIXTURE"
}

# hash_tree DIR [FIND-ARGS...]: one line per entry: path, type, mode, owner, size, mtime
# (not for directories: placeholders come and go in them), link target, content hash.
hash_tree() {
  local dir="$1"
  shift
  [ -e "$dir" ] || [ -L "$dir" ] || { echo "absent $dir"; return; }
  if [ -L "$dir" ] || [ ! -d "$dir" ]; then
    stat -c '%n %F %a %u %g %s %.9Y %.9Z %i %N' "$dir"
    [ -f "$dir" ] && [ ! -L "$dir" ] && [ "$(stat -c %s "$dir")" -lt 1048576 ] && sha256sum "$dir"
    return 0
  fi
  (
    cd "$dir" || exit
    find . -xdev "$@" \( -type d -printf '%p d %m %U %G\n' \) -o -printf '%p %y %m %U %G %s %T@ %C@ %i %l\n'
    find . -xdev "$@" -type f -size -1024k -exec sha256sum {} +
  ) 2>&1 | LC_ALL=C sort
}

# snapshot: the host state every attempt must leave unchanged, on stdout.
snapshot() {
  echo "## the binary"
  stat -c '%n %s %.9Y %.9Z %i %a %u' "$PI_BIN" ${PI_BIN_REAL:+"$PI_BIN_REAL"}
  echo "## the fake home (the workspace, the audit log and the quarantine aside)"
  # The quarantine is pi-sandbox's own record of what the guard moved: expected to change.
  # Its parents, made on first use, too (but nothing else made in them).
  hash_tree "$FAKE_HOME" \( -path ./ws -o -path ./.pi/agent/logs \
    -o -path ./.local/state/pi-sandbox/quarantine \) -prune -o |
    grep -vxE '\./\.local/state(/pi-sandbox)? d 700 [0-9]+ [0-9]+'
  echo "## the workspace's .git"
  hash_tree "$WS/.git" \( -path ./index -o -path ./logs -o -path ./objects -o -path ./refs \
    -o -path ./ORIG_HEAD -o -path ./COMMIT_EDITMSG -o -path ./config \
    -o -path './modules/*/config' \) -prune -o
  # .git/config and the submodules' configs by content: the guard puts back a changed one as a
  # new file (new inode and times), with the same bytes.
  local config
  for config in "$WS/.git/config" $(find "$WS/.git/modules" -name config -type f 2>/dev/null | LC_ALL=C sort); do
    echo "# ${config#"$WS"/}"
    stat -c '%F %a %u %g %s' "$config"
    sha256sum <"$config"
  done
  echo "## the workspace's protected names"
  local n
  for n in "${WS_WATCHED[@]}"; do
    echo "# $n"
    hash_tree "$WS/$n"
  done
  echo "## device nodes"
  # /dev/tty's mtime moves whenever anyone writes to their terminal (the tty layer, not a
  # metadata change): its ctime, mode and owner catch chmod, chown and touch.
  for n in /dev/null /dev/zero /dev/full /dev/random /dev/urandom; do
    [ -e "$n" ] && stat -c '%n %F %a %u %g %.9Y %.9Z' "$n"
  done
  [ -e /dev/tty ] && stat -c '%n %F %a %u %g %.9Z' /dev/tty
  echo "## /etc"
  find /etc -xdev -printf '%p %m %U %G %T@ %s\n' 2>/dev/null | LC_ALL=C sort
}

# leftovers: pids of live processes of this attempt (argv naming the fixture or the tag,
# or a working directory in the fixture).
leftovers() {
  local p
  # The values go through the environment: awk's and find's own argv must not match.
  ps -eo pid=,args= | F="$FIXTURE" T="$TAG" S="$$" \
    awk 'index($0, ENVIRON["F"]) || index($0, ENVIRON["T"]) { if ($1 != ENVIRON["S"]) print }'
  for p in $(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$FIXTURE" 2>/dev/null) \
    $(find /proc/[0-9]*/cwd -maxdepth 0 -lname "$FIXTURE/*" 2>/dev/null); do
    p="${p#/proc/}"
    p="${p%/cwd}"
    echo "$p (cwd $(readlink "/proc/$p/cwd" 2>/dev/null)) $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
  done
}
