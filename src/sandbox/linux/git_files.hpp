// pisandbox::sandbox::linux_ — the files of a workspace inside a repository put back as the
// index before a command recorded them, after git rewrote them in an operation that then
// failed outside the workspace (docs/security.md, "Repositories around the workspace").
//
// The supervisor does this on the host, so it never lets git run a program the workspace or
// the git directory could name: the objects are read with `git cat-file blob` (which applies
// no filter, no textconv and no hook) in an environment of its own and with `core.fsmonitor`
// off; the attributes that would make git convert a file on checkout are asked with `git
// check-attr --cached` (which reads them and runs nothing), and a file they apply to is left
// for the user's own `git checkout --`. Every path is opened from the workspace one component
// at a time without following a symlink, so nothing the command put in the workspace leads
// the writes out of it.
#pragma once

#include <sys/types.h>

#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "policy/git_index.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;

/// How long each `git` the supervisor runs for putting files back may take (seconds); one that
/// takes longer (a FIFO the command left among the objects) is killed and the file left.
inline constexpr int kGitRestoreTimeoutSeconds = 30;

/// What to put back.
struct PackageFiles {
  fs::path root;       ///< the working tree's root
  fs::path git_dir;    ///< its git directory (GIT_DIR for the git run)
  std::string inside;  ///< the workspace, relative to root (`/`-separated, no trailing `/`)
  std::vector<policy::GitIndexEntry> before;  ///< the index before the command
  std::vector<std::string> written;           ///< relative to root: the files git wrote or removed
  struct timespec started {};                 ///< when the command started (CLOCK_REALTIME)
  /// The areas the command could write: a `git` found there is never run.
  std::vector<fs::path> writable;
};

/// Puts each path of `files.written` back as `files.before` holds it: a path the index held
/// (stage 0, a regular file or a symlink) is rewritten with the object's bytes (a new file,
/// mode 0777 or 0666 less the umask as git makes it, renamed over whatever is there; missing
/// parent directories made); a path it did not hold is removed, and so is each directory
/// above it, up to the workspace, that is then empty and was made after `files.started`
/// (statx(2) birth time; none is removed where the file system does not record one). Paths
/// that lie outside the workspace, have a `..`, `.` or `.git` component, or whose directory
/// is reached through a symlink are never written.
/// Returns the paths (relative to root) left as git wrote them: a conversion may apply to them
/// on checkout (gitattributes(5) `filter`, `ident`, `working-tree-encoding`, `eol=crlf`, `text`
/// with `core.autocrlf=true` or `core.eol=crlf`), a symlink while `core.symlinks` is off, or a
/// gitlink.
/// Errors: no `git` outside the writable areas in `PATH`, a git run that fails or times out
/// (`git cat-file blob <object>: exit 128`), or the syscall that failed with the path and
/// errno (`renameat(<root>/pkg/a.txt)`); the paths already put back stay put back.
core::Result<std::vector<std::string>> put_back_files(const PackageFiles& files);

}  // namespace pisandbox::sandbox::linux_
