#!/usr/bin/env bash
# attempt: make guarded names as what a mover may choke on: a FIFO (`.mcp.json`), a unix socket (`.zshrc`, where sockets are allowed), a directory 300 levels deep (`.vscode`), a 64 MiB file (`.gitconfig`), a directory without permissions (`.idea`, mode 000), a dangling symlink (`.ripgreprc`)
# layer: the guard: the name itself is moved (one rename, whatever it is), never opened or followed
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

attempt() {
  capture sandbox -- /bin/bash -c '
mkfifo .mcp.json
# AF_UNIX sockets may be refused inside (seccomp): then there is no socket file to make.
"$0" -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind(\".zshrc\")" 2>/dev/null ||
  echo "no unix socket"
# Built aside and moved into place: the guard takes a name the moment it appears.
d=deep; for i in $(seq 300); do d=$d/d; done
mkdir -p "$d" && echo "{}" > "$d/tasks.json" && mv deep .vscode
head -c 64M /dev/zero > big && mv big .gitconfig
mkdir -p idea/x && chmod 000 idea && mv idea .idea
ln -s /nonexistent-'"$TAG"' .ripgreprc
sleep 0.5
echo done' "$PY"
  expect_rc 0
  expect_out done
  local names=(.mcp.json .vscode .gitconfig .ripgreprc) n
  grep -qx "no unix socket" <<<"$OUT" || names+=(.zshrc)
  for n in "${names[@]}"; do expect_quarantined "$WS/$n"; done
  host_absent "$WS/.zshrc" "$WS/.idea"
  # A directory without write permission cannot change parents (its `..`) without
  # CAP_DAC_OVERRIDE: without it the guard renames it in place to a name no program reads.
  if ! grep -qF "pi-sandbox: moved $WS/.idea to the quarantine (" <<<"$ERR"; then
    expect_err "pi-sandbox: renamed $WS/.idea to $WS/.idea.pi-sandbox-defused-"
    chmod 755 "$WS"/.idea.pi-sandbox-defused-*
    rm -rf "$WS"/.idea.pi-sandbox-defused-*
  else
    expect_quarantined "$WS/.idea"
  fi
  local stray
  stray="$(cd "$WS" && ls -A | grep -F pi-sandbox | head -3)"
  [ -z "$stray" ] || escaped "left in the workspace: $stray"
  chmod -R u+rwX "$(quarantine_dir)"
}

run_attempt "$@"
