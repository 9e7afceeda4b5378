#!/usr/bin/env bash
# attempt: create the dangerous files that are missing at the workspace root (`.vscode/`, `.idea/`, `.mcp.json`, `.gitconfig`, shell rc files, `.pi/settings.json`, `.claude/commands/`), with the guard (the default) and with `filesystem.protection: "strict"`
# layer: the guard: a missing protected name is moved to the quarantine the moment it appears (strict: placeholders hold it read-only for the length of the command)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

NAMES=(.vscode/tasks.json .idea/workspace.xml .mcp.json .gitconfig .bashrc
  .bash_profile .zshrc .zprofile .profile .ripgreprc .pi/settings.json .pi/sandbox.json
  .pi/pi-auto-review.json .claude/commands/x.md .claude/agents/x.md .claude/settings.json
  .claude/settings.local.json)

attempt() {
  expect_names_uncreatable "${NAMES[@]}"
}

run_attempt "$@"
