#!/usr/bin/env bash
# attempt: create the project configurations other agents and editors run on the host: `.gemini/settings.json`, `.roo/mcp.json`, `.kiro/settings/mcp.json`, `.amazonq/mcp.json`, `.zed/tasks.json`, `opencode.json`, `.opencode/plugin/x.js`, `.continue/mcpServers/x.yaml`, `.windsurf/workflows/x.md`, `.codex/config.toml`, `.clinerules/hooks/x`, `.claude/hooks/x.sh`
# layer: the guard: one row per tool in the names host programs run (docs/security.md), each moved to the quarantine the moment it appears
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

FILES=(.gemini/settings.json .roo/mcp.json .kiro/settings/mcp.json .amazonq/mcp.json .zed/tasks.json
  opencode.json .opencode/plugin/x.js .continue/mcpServers/x.yaml .windsurf/workflows/x.md
  .codex/config.toml .clinerules/hooks/x .claude/hooks/x.sh)

setup() {
  mkdir -p "$WS/.claude"  # Claude Code's directory exists; only its hooks are guarded in it
}

attempt() {
  local script="" f
  for f in "${FILES[@]}"; do
    script+="mkdir -p \$(dirname $f); try_write $f 'touch $HOST_DIR/pwned-$TAG\n'
"
  done
  inside_try "$script"
  expect_rc 0
  for f in "${FILES[@]}"; do host_absent "$WS/$f"; done
  expect_quarantined "$WS/.gemini" "$WS/.roo" "$WS/.kiro" "$WS/.amazonq" "$WS/.zed" \
    "$WS/opencode.json" "$WS/.opencode" "$WS/.continue" "$WS/.windsurf" "$WS/.codex" \
    "$WS/.clinerules" "$WS/.claude/hooks"
}

run_attempt "$@"
