# shellcheck shell=bash
# tests/escape/helpers/monorepo.sh: the monorepo of the attempts whose workspace is a package
# (docs/security.md, "Repositories around the workspace"). Sourced by attempts after lib.sh.
#
# The repository is its own inside the fixture's workspace: the battery snapshots the
# fixture's `.git`, which putting HEAD back would rewrite.

# shellcheck disable=SC2034  # used by the attempts that source this
MONO="$WS/mono"
# shellcheck disable=SC2034
APP="$MONO/packages/app"

# host_git ARGS...: git on the host in the monorepo, with the fake home and no fsmonitor.
host_git() { (cd "$MONO" && HOME="$FAKE_HOME" git -c core.fsmonitor=false "$@"); }

# package: every entry of the package, one line each (path, mode, size, symlink target), then
# each regular file's SHA-256.
package() {
  (cd "$APP" && find . -printf '%p %M %s %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# new_monorepo: the repository's first files: `README.md` ("main") outside the package,
# `app.txt` ("app") inside it.
new_monorepo() {
  mkdir -p "$APP"
  echo main >"$MONO/README.md"
  echo app >"$APP/app.txt"
}

# first_commit: a repository of what the monorepo holds, committed on its first branch.
first_commit() {
  { host_git init -q && host_git add -A && host_git commit -qm app; } >/dev/null
}

# put_back COMMAND LINE: runs COMMAND (a git operation that fails on a file outside the package)
# in the package and checks that the package, `git status` and the stash are as before, with
# exit 125 and LINE in stderr.
put_back() {
  local before status
  before="$(package)"
  status="$(host_git status --porcelain; host_git stash list)"
  capture env HOME="$FAKE_HOME" "$PI_BIN" run --no-prompt --cwd "$APP" -c "$1"
  [ "$(package)" = "$before" ] || { show; escaped "the package is not as it was: $(diff <(echo "$before") <(package) | tr '\n' ' ')"; }
  [ "$(host_git status --porcelain; host_git stash list)" = "$status" ] || escaped "host git status or the stash changed: $(host_git stash list)"
  expect_rc 125
  expect_err "$2"
}

# stash_put_back COMMAND: put_back for a `git stash` (push): the line names the entry it made,
# kept as an object.
stash_put_back() {
  put_back "$1" "the repository is as it was before the command (the stash entry it made is kept as an object: \`git stash apply "
}

# apply_put_back COMMAND: put_back for a `git stash apply` that fails on `README.md`.
apply_put_back() {
  put_back "$1" "git needed to change paths outside the workspace, which are read-only here: $MONO/README.md; the repository is as it was before the command"
}
