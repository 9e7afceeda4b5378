#!/usr/bin/env bash
# attempt: create the dangerous files that are missing at the workspace root (`.vscode/`, `.idea/`, `.mcp.json`, `.gitmodules`, `.gitconfig`, shell rc files, `.pi/settings.json`, `.claude/commands/`)
# layer: mount plan: placeholders hold missing protected names read-only for the length of the command
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  expect_uncreatable sandbox "$WS/.vscode/tasks.json" "$WS/.idea/workspace.xml" \
    "$WS/.mcp.json" "$WS/.gitmodules" "$WS/.gitconfig" "$WS/.bashrc" "$WS/.bash_profile" \
    "$WS/.zshrc" "$WS/.zprofile" "$WS/.profile" "$WS/.ripgreprc" "$WS/.pi/settings.json" \
    "$WS/.pi/sandbox.json" "$WS/.pi/pi-auto-review.json" "$WS/.claude/commands/x.md" \
    "$WS/.claude/agents/x.md"
}

run_attempt "$@"
