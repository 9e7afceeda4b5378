// pisandbox::sandbox::linux_::git_detail — what the files that put a workspace's files back
// share (docs/security.md, "Repositories around the workspace"): git runs that read objects
// (git_objects.cpp) and the workspace's paths reached without following a symlink
// (git_files.cpp), used by what tells git's writes apart (git_unfinished.cpp). Not for other
// callers: git_files.hpp is the interface.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "policy/git_index.hpp"
#include "sandbox/linux/git_files.hpp"

namespace pisandbox::sandbox::linux_::git_detail {

/// The type bits of an index or tree mode (S_IFMT), and the types git writes a file for.
inline constexpr std::uint32_t kTypeMask = 0170000, kRegular = 0100000, kSymlink = 0120000;

/// Which configuration a git run reads: Isolated (the repository's own `config` only, which
/// the command cannot write: docs/security.md, "Repositories around the workspace") for
/// reading objects; User (also the user's global and system files, which decide how files are
/// converted on checkout) for asking attributes and settings.
enum class GitConfig { Isolated, User };

/// When the git runs of one put-back must be done.
using Deadline = std::chrono::steady_clock::time_point;

/// What a git run printed and how it ended.
struct GitRun {
  int code = -1;
  std::string out;
};

// Reading objects with git (git_objects.cpp).

/// The `git` of `PATH` outside every writable area (a relative or writable `PATH` entry could
/// hold a `git` the command wrote), or nullopt.
std::optional<std::string> host_git(const std::vector<fs::path>& writable);

/// Runs `git -c core.fsmonitor=false <args>` in the working tree's root, stdin from `in` (-1:
/// /dev/null), stdout into `out` (-1: a pipe read into the result), stderr discarded, with
/// git_environment(), in a process group of its own; killed at `deadline`.
core::Result<GitRun> run_git(const std::string& git, const PackageFiles& files, GitConfig config,
                             Deadline deadline, const std::vector<std::string>& args, int in = -1,
                             int out = -1);

/// `bytes` (a raw object name) in lower-case hexadecimal.
std::string hex(std::string_view bytes);

/// Whether `name` is an object name in lower-case hexadecimal: 40 digits (SHA-1) or 64
/// (SHA-256), gitrevisions(7) "<sha1>".
bool is_object_name(std::string_view name);

/// The new object names of the newest `count` lines of a reflog, newest first
/// (gitrepository-layout(5), `logs/`: each line `<old> SP <new> SP <identity> <time> <zone>
/// TAB <message>`); a line whose new name is no object name (is_object_name()) is skipped.
/// `<ref>@{n}` is the n-th of them (gitrevisions(7)).
std::vector<std::string> reflog_new_names(std::string_view reflog, std::size_t count);

/// Whether the reflog `now` holds `before` (nullopt: there was none) and more lines after it:
/// an entry was added, as `git stash` (push) adds one. A drop or a pop rewrites it without
/// one (git-stash(1)), which is no addition.
bool reflog_grew(const std::optional<std::string>& before, const std::string& now);

/// The paths of `paths` git may convert on checkout, or whose kind git would not write as the
/// index records it: gitattributes(5) "Effects" (`filter`, `ident`, `working-tree-encoding`,
/// `eol=crlf`, `crlf`; `text` not unset with `core.autocrlf=true` or `core.eol=crlf`) as `git
/// check-attr --cached` reports them (the index's `.gitattributes` as before the command,
/// `info/attributes`, the user's global and system files), and every symlink while
/// `core.symlinks` is off.
core::Result<std::set<std::string>> converted(
    const std::string& git, const PackageFiles& files, Deadline deadline,
    const std::vector<const policy::GitIndexEntry*>& paths);

/// Whether the repository reads objects only from its own object directory: never from another
/// repository's, which the command may not read (gitrepository-layout(5),
/// `objects/info/alternates`, `objects/info/http-alternates`), since the bytes read end up
/// in the workspace.
core::Result<void> own_objects(const PackageFiles& files);

/// Whether no loose object of the repository (nor a directory of them) is a symbolic link:
/// git reads through one, and a commit or tree read so (by `git diff-tree`) would have the line
/// name the paths of a repository the command cannot read.
core::Result<void> own_loose_objects(const PackageFiles& files);

/// Whether the loose object `oid` (hexadecimal), if there is one, is a file of the repository's
/// own: git reads through a symbolic link there, which the command can point at an object of a
/// repository it cannot read (its bytes then hash to its name all the same).
core::Result<void> own_loose_object(const PackageFiles& files, const std::string& oid);

/// The name (hexadecimal) of the blob whose bytes are those of `fd` from its start: `git
/// hash-object --no-filters` (git-hash-object(1): no filter, nothing written).
core::Result<std::string> blob_name(const std::string& git, const PackageFiles& files,
                                    Deadline deadline, int fd);

/// Whether the bytes of `fd` (from its start) are the blob `oid` (hexadecimal), named anew by
/// blob_name(). `git cat-file` does not check a loose or packed object against its name, and
/// the command can replace either (or link one to an object of a repository it cannot read).
core::Result<void> is_object(const std::string& git, const PackageFiles& files, Deadline deadline,
                             int fd, const std::string& oid);

/// A regular file or a symlink: what git writes a file for.
bool has_file(std::uint32_t mode);

/// The entries of the tree of `commit` below the workspace that git writes a file for
/// (`git ls-tree -r -z --full-tree <commit> -- <inside>`, git-ls-tree(1) "Output format":
/// `<mode> SP <type> SP <object> TAB <path>` NUL-terminated), by path.
core::Result<std::map<std::string, policy::GitIndexEntry>> tree_of(const std::string& git,
                                                                   const PackageFiles& files,
                                                                   Deadline deadline,
                                                                   const std::string& commit);

// The workspace's paths, reached without following a symlink (git_files.cpp).

/// The directories from the workspace down to a path's parent, each opened without following
/// a symlink (O_PATH); missing ones made (0777 less the umask, as git makes them) when `make`.
/// An empty vector when one is missing and not made.
core::Result<std::vector<core::UniqueFd>> open_parents(const fs::path& workspace,
                                                       const std::vector<std::string>& parts,
                                                       bool make);

/// `path` (relative to the root) split below the workspace, or empty when it is not a plain
/// path inside it (a `..`, `.` or empty component, or `.git` in any case).
std::vector<std::string> parts_below(const std::string& inside, const std::string& path);

/// Whether `path` (relative to the root) is a protected path, lies below one, or has a first
/// component below a pattern row's directory that the row matches: never written or removed.
bool is_guarded(const PackageFiles& files, const std::string& path);

}  // namespace pisandbox::sandbox::linux_::git_detail
