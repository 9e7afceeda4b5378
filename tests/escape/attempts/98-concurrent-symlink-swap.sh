#!/usr/bin/env bash
# attempt: two sandboxes of one workspace at once: one keeps swapping `sub/.vscode` between a directory, nothing and a symlink to the real home; the other starts 20 times (its scan finds `sub/.vscode` and binds it) and reads and writes through it
# layer: mount plan: paths opened with RESOLVE_NO_SYMLINKS and bound by descriptor, so a swap cannot redirect a bind out of the workspace
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  mkdir -p "$WS/sub"
  # The swapper: a sandbox of its own (sub/.vscode does not exist when it starts, so it
  # is an ordinary path there), bounded in rounds and time.
  HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --timeout 40 --cwd "$WS" -c "
mkdir -p sub/.vscode-dir && echo '{}' > sub/.vscode-dir/settings.json
n=0
for i in \$(seq 100000); do
  [ -e sub/stop ] && break
  if [ -L sub/.vscode ]; then rm -f sub/.vscode; fi
  [ -e sub/.vscode ] || mv -T sub/.vscode-dir sub/.vscode
  if mv -T sub/.vscode sub/.vscode-dir; then ln -s '$FAKE_HOME' sub/.vscode && n=\$((n + 1)); fi
done 2>/dev/null
echo \"swaps: \$n\"" </dev/null >"$HOST_DIR/swapper.out" 2>&1 &
  local swapper=$! i bound=0
  # shellcheck disable=SC2064 # the value now: the local is gone when the trap runs
  trap "touch '$WS/sub/stop'; wait '$swapper' 2>/dev/null" EXIT
  for i in $(seq 50); do [ -e "$WS/sub/.vscode-dir" ] || [ -e "$WS/sub/.vscode" ] && break; sleep 0.1; done
  for i in $(seq 20); do
    capture sandbox -c 'grep -q " '"$WS"'/sub/.vscode " /proc/self/mountinfo && echo BOUND
cat sub/.vscode/.ssh/id_ed25519 2>/dev/null; ls -A sub/.vscode/ 2>/dev/null | tr "\n" " "; echo
touch sub/.vscode/pwned-'"$i"' 2>/dev/null; echo pwned >> sub/.vscode/.bashrc 2>/dev/null; true'
    refute "$FAKE_KEY_MARKER"
    case "$OUT" in *.ssh*) escaped "round $i: the real home was listed through sub/.vscode: $OUT" ;; esac
    case "$OUT" in *BOUND*) bound=$((bound + 1)) ;; esac
    sleep "0.0$((RANDOM % 6))"  # let the swapper move while no sandbox holds the directory
  done
  touch "$WS/sub/stop"
  wait "$swapper" 2>/dev/null
  trap - EXIT
  host_absent "$FAKE_HOME"/pwned-*
  grep -q pwned "$FAKE_HOME/.bashrc" && escaped "the real ~/.bashrc was written through the swapped link"
  grep -q '^swaps: [1-9]' "$HOST_DIR/swapper.out" || escaped "the swapper did not swap: $(cat "$HOST_DIR/swapper.out")"
  echo "$(cat "$HOST_DIR/swapper.out"); sub/.vscode bound in $bound of 20 starts" >&2
}

run_attempt "$@"
