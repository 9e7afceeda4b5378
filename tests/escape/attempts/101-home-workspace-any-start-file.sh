#!/usr/bin/env bash
# attempt: workspace = the home: create start files no fixed list names: a `.pth` in `~/.local/lib/python3.11/site-packages` (run by every host python), a new `~/.git/config` with `core.fsmonitor` (run by a host `git status` anywhere below the home), `~/.bash_completion`, `~/.cargo/env`, `~/.bashrc.d/x.sh`, `~/.config/gh/config.yml`, a new top-level name; ordinary work in a directory of the home still works
# layer: mount plan: the home's top level and every dot-entry read-only when the workspace is the home, its ordinary directories read-write
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

setup() {
  mkdir -p "$FAKE_HOME/.config" "$FAKE_HOME/.local/share" "$FAKE_HOME/projects/app"
}

attempt() {
  expect_uncreatable sandbox_home \
    "$FAKE_HOME/.local/lib/python3.11/site-packages/evil.pth" \
    "$FAKE_HOME/.git/config" \
    "$FAKE_HOME/.bash_completion" \
    "$FAKE_HOME/.cargo/env" \
    "$FAKE_HOME/.bashrc.d/x.sh" \
    "$FAKE_HOME/.config/gh/config.yml" \
    "$FAKE_HOME/new-top-level-file"
  capture sandbox_home -c 'echo work > projects/app/out.txt && mkdir -p projects/new && cat projects/app/out.txt'
  expect_rc 0
  expect_out "work"
  [ -f "$FAKE_HOME/projects/app/out.txt" ] || escaped "ordinary work in ~/projects did not reach the host"
  rm -rf "$FAKE_HOME/projects/app/out.txt" "$FAKE_HOME/projects/new"
}

run_attempt "$@"
