#!/usr/bin/env bash
# attempt: make the guard move something outside the workspace: swap `.claude` (and `.pi`) between a directory holding the guarded name and a symlink to a host directory holding the same name (`$HOST_DIR/victim/commands`), 300 times, so the guard's walk lands on the host directory
# layer: the guard: every walk holds descriptors opened without following symlinks from the writable root; a symlink on the way is what it quarantines
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$HOST_DIR/victim/commands"
  echo "host file $TAG" >"$HOST_DIR/victim/commands/keep.md"
  echo "{}" >"$HOST_DIR/victim/settings.json"
}

attempt() {
  capture sandbox -c '
for i in $(seq 300); do
  mkdir -p d/commands && echo x > d/commands/x.md && echo "{}" > d/settings.json
  mv -T d .claude 2>/dev/null
  mv -T .claude d-old-$i 2>/dev/null
  ln -sfn '"$HOST_DIR"'/victim .claude
  ln -sfn '"$HOST_DIR"'/victim .pi
  rm -f .claude .pi
  mkdir -p p && echo "{}" > p/settings.json && mv -T p .pi 2>/dev/null
  mv -T .pi p-old-$i 2>/dev/null
  rm -rf d-old-$i p-old-$i d p
done
ln -sfn '"$HOST_DIR"'/victim .claude
ln -sfn '"$HOST_DIR"'/victim .pi
echo done'
  expect_rc 0
  expect_out done
  [ -f "$HOST_DIR/victim/commands/keep.md" ] || escaped "the guard moved the host's victim/commands"
  [ -f "$HOST_DIR/victim/settings.json" ] || escaped "the guard moved the host's victim/settings.json"
  [ "$(cat "$HOST_DIR/victim/commands/keep.md")" = "host file $TAG" ] || escaped "victim/commands/keep.md changed"
  [ "$(ls -A "$HOST_DIR/victim")" = "$(printf 'commands\nsettings.json')" ] || escaped "victim changed: $(ls -A "$HOST_DIR/victim")"
  host_absent "$WS/.claude/commands" "$WS/.pi/settings.json" "$WS/.claude" "$WS/.pi"
  # Nothing in the quarantine came from outside the workspace.
  if grep -h '"original"' "$(quarantine_dir)"/*/record.json 2>/dev/null | grep -vF "\"$WS/"; then
    escaped "the quarantine holds something from outside the workspace"
  fi
  rm -rf "$WS/.claude" "$WS/.pi"
}

run_attempt "$@"
