#!/usr/bin/env bash
# attempt: make guarded names without creating them in place: `mv` a prepared directory to `.vscode`, hard-link a file to `.mcp.json`, `cp -r` a tree to `.idea`, move a directory holding `settings.json` to `.pi`, and reach `.claude/commands` through a symlink parent (`ln -s sub .claude`)
# layer: the guard: a rename, link or copy into place is an inotify event like a creation; a symlink on the way to a guarded name is itself quarantined
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  inside_try '
mkdir -p src/vs src/idea src/pi sub
echo "{\"tasks\": []}" > src/vs/tasks.json
echo "{\"mcpServers\": {}}" > src/mcp.json
echo "<project/>" > src/idea/workspace.xml
echo "{}" > src/pi/settings.json
try mv src/vs .vscode
try ln src/mcp.json .mcp.json
try cp -r src/idea .idea
try mv src/pi .pi
try ln -s sub .claude
try mkdir -p sub/commands
try_write sub/commands/x.md "run this\n"
sleep 0.5
ls -A . .pi 2>&1 | tr "\n" " "; echo'
  expect_rc 0
  host_absent "$WS/.vscode" "$WS/.mcp.json" "$WS/.idea" "$WS/.pi/settings.json" "$WS/.claude"
  expect_quarantined "$WS/.vscode" "$WS/.mcp.json" "$WS/.idea" "$WS/.pi/settings.json" \
    "$WS/.claude"
  # The symlink was quarantined as a symlink, not followed: sub/ keeps what was made there.
  [ -L "$(dirname "$(grep -lF "\"original\": \"$WS/.claude\"" "$(quarantine_dir)"/*/record.json)")/.claude" ] ||
    escaped "the quarantined .claude is not the symlink"
  [ -f "$WS/sub/commands/x.md" ] || escaped "the guard moved sub/commands, which the symlink pointed at"
  [ -f "$WS/src/mcp.json" ] || escaped "the guard moved the other name of the hard link"
  rmdir "$WS/.pi"
}

run_attempt "$@"
