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
#include "policy/sandbox_policy.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;

/// How long the `git` runs of putting a workspace's files back may take together (seconds): one
/// still running then (a FIFO the command left among the objects) is killed, and the files not
/// yet put back are left.
inline constexpr int kGitRestoreTimeoutSeconds = 30;

/// What to put back.
struct PackageFiles {
  fs::path root;       ///< the working tree's root
  fs::path git_dir;    ///< its git directory (GIT_DIR for the git run)
  std::string inside;  ///< the workspace, relative to root (`/`-separated, no trailing `/`)
  std::vector<policy::GitIndexEntry> before;  ///< the index before the command
  std::vector<std::string> written;           ///< relative to root: the files git wrote or removed
  struct timespec started {};                 ///< when the command started (CLOCK_REALTIME_COARSE)
  /// The areas the command could write: a `git` found there is never run.
  std::vector<fs::path> writable;
  /// Absolute protected paths (docs/security.md, "Protected paths"): git cannot write them
  /// inside, so one named as written is the command's doing, and it and what lies below it
  /// are never written or removed.
  std::vector<fs::path> protected_paths;
  /// Pattern rows (`*.code-workspace` at the workspace's root): a path whose first component
  /// below the row's directory matches is never written or removed either.
  std::vector<policy::ProtectedPattern> protected_patterns;
};

/// What put_back_files() or put_back_stashed() left as git wrote it (paths relative to the root,
/// sorted).
struct PutBack {
  /// The paths the object's bytes would not restore: a conversion may apply to them on
  /// checkout (gitattributes(5) `filter`, `ident`, `working-tree-encoding`, `eol=crlf`, `text`
  /// with `core.autocrlf=true` or `core.eol=crlf`), a symlink while `core.symlinks` is off, a
  /// gitlink, a conflicted path, or a path that is not plainly inside the workspace.
  std::vector<std::string> left;
  /// The paths whose putting back failed, and the first failure: no `git` outside the writable
  /// areas in `PATH`, a git run that failed or was not done in time (`git cat-file blob
  /// <object>: exit 128`), an object whose bytes are another object's (`git cat-file blob
  /// <object>: its bytes are the object <name>`: one the command replaced), a repository that
  /// borrows objects from another one
  /// (`objects/info/alternates`, a symbolic link among its packs or loose objects: those are
  /// never read, the command may not be able to), or
  /// the syscall with the path and errno (`openat(<root>/pkg/sub): ENOTDIR`, a directory the
  /// command replaced with a symlink).
  std::vector<std::string> failed;
  std::string error;
};

/// Puts each path of `files.written` back as `files.before` holds it: a path the index held
/// (stage 0, a regular file or a symlink) is rewritten with the object's bytes (a new file,
/// mode 0777 or 0666 less the umask as git makes it, renamed over whatever is there; missing
/// parent directories made); a path it did not hold is removed, and so is each directory
/// above it, up to the workspace, that is then empty and was born after `files.started`
/// (statx(2) birth time; none is removed where the file system does not record one). Each
/// path is reached from the workspace one directory at a time without following a symlink,
/// and one with a `..`, `.` or `.git` component is never written. What could not be put back
/// is in the result; the rest is put back whatever failed for another path.
[[nodiscard]] PutBack put_back_files(const PackageFiles& files);

/// After a `git stash` that saved its entry `stash` (a commit name) and then failed to reset
/// the working tree outside the workspace: puts back the workspace's tracked files (those
/// `files.before` holds at stage 0) its reset had rewritten, from what the entry saved of the
/// working tree (the entry's tree, git-stash(1) "Discussion"): a file whose saved object (or
/// mode) is not its first parent's is written as saved, one the entry does not hold but the
/// parent does (deleted in the working tree) is removed; the way put_back_files() writes and
/// removes them, with the same result; when the entry cannot be read, `error` says why and no
/// path is named. `files.written` is not used.
[[nodiscard]] PutBack put_back_stashed(const PackageFiles& files, const std::string& stash);

}  // namespace pisandbox::sandbox::linux_
