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

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
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

/// What lstat(2) says of a file: its type and permission bits, inode, size, and the times of
/// its last change (any write, chmod or rename over it changes one of them: the command cannot
/// set the change time back).
struct FileStamp {
  std::uint64_t dev = 0, ino = 0, size = 0;
  std::uint32_t mode = 0;
  std::int64_t mtime_seconds = 0, mtime_nanoseconds = 0, ctime_seconds = 0, ctime_nanoseconds = 0;

  friend bool operator==(const FileStamp&, const FileStamp&) = default;
};

/// The stamp of `path` (not followed when a symlink), or nullopt when nothing is there.
[[nodiscard]] std::optional<FileStamp> stamp_of(const fs::path& path);

/// The most files unfinished_writes() names anew (1000) and bytes it reads for that (64 MiB);
/// files beyond are left as they are and named.
inline constexpr std::size_t kCompareFilesBound = 1000;
inline constexpr std::size_t kCompareBytesBound = std::size_t{64} << 20;
/// The most commits unfinished_writes() compares with HEAD.
inline constexpr std::size_t kTargetCommitsBound = 64;
/// The newest entries of a reflog (`logs/HEAD`, `logs/refs/stash`) taken as such commits (16).
inline constexpr std::size_t kReflogTargetsBound = 16;

/// What an operation that stopped before it changed HEAD or the index (`git rebase`, `git
/// pull`, `git merge`, `git reset --hard`, `git cherry-pick`) had already written inside the
/// workspace, told from the commits it may have been moving to.
struct Unfinished {
  /// Relative to the root: the paths outside the workspace where a commit that explains a
  /// write differs from HEAD (sorted).
  std::vector<std::string> outside;
  /// Relative to the root: the files git wrote or removed inside (sorted), for put_back_files().
  std::vector<std::string> written;
  /// Relative to the root: the other tracked files that changed during the command (its own
  /// edits, a file git merged from both sides, one not compared beyond kCompareFilesBound or
  /// kCompareBytesBound; not one that holds the index's object again), left as they are; only
  /// when `written` is not empty (sorted).
  std::vector<std::string> unchecked;
};

/// The files of the workspace a git operation wrote for one of `targets` (object names in
/// hexadecimal, or a stash entry's `<name>^3`, whose tree holds the untracked files `git stash
/// apply` writes first and whose differences outside are the entry's own; in order of
/// preference; at most kTargetCommitsBound are compared) before it
/// stopped on a path outside the workspace, with HEAD and `files.before` (the index) as they
/// were: for each target whose tree differs from HEAD's outside the workspace (`git diff-tree
/// -r -z --no-renames HEAD <target>`, git-diff-tree(1) "Raw output format"), a tracked file
/// whose stamp differs from `stamps` (taken as the command started) and that now holds the
/// target's object at its path with its mode (named with `git hash-object -t blob
/// --no-filters --stdin`, read without following a symlink), one the target deletes that was
/// there and is gone, or one the target adds that the index did not hold, born after
/// `files.started` and holding the target's object. Such a file's bytes are an object of the
/// repository, so putting it back loses nothing; a file the command wrote with other bytes is
/// never named, nor a protected path (`files.protected_paths`, `files.protected_patterns`).
/// Nothing is compared when no tracked file changed and `state_changed` is false (the command
/// left git's state as it was: a build or a test that failed), nor in a repository that
/// borrows objects (`objects/info/alternates`, a linked pack or loose object: `git diff-tree`
/// would read a repository the command cannot, and `outside` name its paths). Git runs as
/// put_back_files() runs them; a target git cannot compare is skipped.
[[nodiscard]] Unfinished unfinished_writes(
    const PackageFiles& files, const std::vector<std::string>& targets,
    const std::map<std::string, std::optional<FileStamp>>& stamps, bool state_changed);

/// Puts each path of `files.written` back as `files.before` holds it: a path the index held
/// (stage 0, a regular file or a symlink) is rewritten with the object's bytes (a new file,
/// mode 0777 or 0666 less the umask as git makes it, renamed over whatever is there; missing
/// parent directories made); a path it did not hold is removed, and so is each directory
/// above it, up to the workspace, that is then empty and was born after `files.started`
/// (statx(2) birth time; none is removed where the file system does not record one). Each
/// path is reached from the workspace one directory at a time without following a symlink,
/// and one with a `..`, `.` or `.git` component is never written, nor one below a directory
/// of the workspace that is (or that the files put back would make) a git directory: one
/// holding `HEAD` and `commondir`, or `HEAD`, `objects` and `refs` (gitrepository-layout(5)),
/// whose `hooks/` host git runs. What could not be put back
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
