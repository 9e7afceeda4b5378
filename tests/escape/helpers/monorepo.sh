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
