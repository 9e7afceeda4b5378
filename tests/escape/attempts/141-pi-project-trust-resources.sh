#!/usr/bin/env bash
# attempt: create Pi's project resources that need the project's trust (`.pi/extensions/evil.ts`, `.pi/mcp.json`, `.pi/SYSTEM.md`, `.pi/APPEND_SYSTEM.md`, `.pi/skills/`, `.pi/prompts/`, `.pi/themes/`, `.agents/skills/`) at the workspace root, so that a later trusted Pi start there runs the extension on the host; with the guard (the default) and with `filesystem.protection: "strict"`
# layer: the guard: a missing protected name is moved to the quarantine the moment it appears (strict: placeholders hold it read-only for the length of the command)
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

NAMES=(.pi/extensions/evil.ts .pi/mcp.json .pi/SYSTEM.md .pi/APPEND_SYSTEM.md
  .pi/skills/x/SKILL.md .pi/prompts/x.md .pi/themes/x.json .agents/skills/x/SKILL.md)

attempt() {
  expect_names_uncreatable "${NAMES[@]}"
}

run_attempt "$@"
