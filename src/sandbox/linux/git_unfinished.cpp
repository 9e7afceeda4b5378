// pisandbox::sandbox::linux_ — telling what a git operation that stopped before it changed
// HEAD or the index had already written in the workspace (docs/security.md, "Repositories
// around the workspace"): the commits it may have been moving to, compared with HEAD and with
// the files as they are now, by their object names.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <span>

#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/sandbox_policy.hpp"
#include "sandbox/linux/git_files.hpp"
#include "sandbox/linux/git_files_detail.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using namespace git_detail;

namespace {

/// A file of the workspace as a tree records it: mode (0100644, 0100755, 0120000) and object
/// name (hexadecimal).
struct Blob {
  std::uint32_t mode = 0;
  std::string oid;
  friend bool operator==(const Blob&, const Blob&) = default;
};

/// How the tree of a target differs from HEAD's: the paths outside the workspace, and inside
/// it each path with the target's file (nullopt: the target has none there).
struct TargetDiff {
  std::vector<std::string> outside;
  std::map<std::string, std::optional<Blob>> inside;
};

/// `git diff-tree -r -z --no-renames HEAD <target>` (git-diff-tree(1), "Raw output format":
/// `:<mode> SP <mode> SP <object> SP <object> SP <status>` NUL `<path>` NUL), or nullopt when
/// git cannot compare them (a target that is no commit).
core::Result<std::optional<TargetDiff>> diff_to(const std::string& git, const PackageFiles& files,
                                                Deadline deadline, const std::string& target) {
  auto listed = run_git(
      git, files, GitConfig::Isolated, deadline,
      {"diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "HEAD", target});
  if (!listed) return std::unexpected(listed.error());
  if (listed->code != 0) return std::nullopt;
  TargetDiff diff;
  for (std::string_view rest = listed->out; !rest.empty();) {
    const auto meta_end = rest.find('\0');
    if (meta_end == std::string_view::npos) break;
    const std::string_view meta = rest.substr(0, meta_end);
    rest.remove_prefix(meta_end + 1);
    const auto path_end = rest.find('\0');
    const std::string path(rest.substr(0, path_end));
    rest.remove_prefix(path_end == std::string_view::npos ? rest.size() : path_end + 1);
    // ":100644 100755 <old> <new> M": the target's mode and object are the second ones.
    std::vector<std::string_view> fields;
    for (std::string_view m = meta.substr(meta.starts_with(':') ? 1 : 0); !m.empty();) {
      const auto space = m.find(' ');
      fields.push_back(m.substr(0, space));
      m.remove_prefix(space == std::string_view::npos ? m.size() : space + 1);
    }
    if (fields.size() != 5 || path.empty())
      return core::fail("git diff-tree " + target + ": an entry git does not print");
    // A gitlink (a submodule's commit) outside is no file git writes there.
    const bool gitlink = std::ranges::all_of(std::span(fields).first(2), [](std::string_view m) {
      return m == "160000" || m == "000000";
    });
    if (!path.starts_with(files.inside + "/")) {
      if (!gitlink) diff.outside.push_back(path);
      continue;
    }
    const auto mode = static_cast<std::uint32_t>(std::stoul(std::string(fields[1]), nullptr, 8));
    if (mode == 0)
      diff.inside.emplace(path, std::nullopt);
    else
      diff.inside.emplace(path, Blob{mode, std::string(fields[3])});
  }
  return diff;
}

/// For `target` `<entry>^3`, the untracked files of a stash entry (git-stash(1) `--include-
/// untracked`: the entry's third parent holds them, and `git stash apply` writes them before it
/// merges the tracked ones): the entry's own diff_to() outside the workspace, and inside it
/// each file of the third parent's tree (tree_of()); nullopt when the entry has no third parent
/// or git cannot compare it.
core::Result<std::optional<TargetDiff>> untracked_diff(const std::string& git,
                                                       const PackageFiles& files, Deadline deadline,
                                                       const std::string& target) {
  auto tree = tree_of(git, files, deadline, target);
  if (!tree) return std::optional<TargetDiff>{};
  auto diff = diff_to(git, files, deadline, target.substr(0, target.size() - 2));
  if (!diff || !*diff) return diff;
  (*diff)->inside.clear();
  for (const auto& [path, e] : *tree) (*diff)->inside.emplace(path, Blob{e.mode, hex(e.oid)});
  return diff;
}

/// What is at `path` (relative to the root) in the workspace now, reached without following a
/// symlink: nullopt when nothing is there, a mode of 0 when it is no file git writes. Reading
/// a regular file takes its size from `bytes_left`.
core::Result<std::optional<Blob>> current_blob(const std::string& git, const PackageFiles& files,
                                               Deadline deadline, const std::string& path,
                                               std::size_t& bytes_left) {
  const std::vector<std::string> parts = parts_below(files.inside, path);
  if (parts.empty()) return core::fail(path + ": not plainly inside the workspace");
  auto dirs = open_parents(files.root / files.inside, parts, false);
  if (!dirs) return std::unexpected(dirs.error());
  if (dirs->empty()) return std::nullopt;
  const int dir = dirs->back().get();
  const char* name = parts.back().c_str();
  const fs::path shown = files.root / path;
  struct stat st {};
  if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return std::nullopt;
    return core::fail_errno("fstatat(" + shown.string() + ")");
  }
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    const ssize_t n = ::readlinkat(dir, name, target, sizeof target);
    if (n < 0) return core::fail_errno("readlinkat(" + shown.string() + ")");
    UniqueFd memfd(::memfd_create("pi-sandbox-symlink", MFD_CLOEXEC));
    if (memfd.get() < 0 ||
        !core::write_all(memfd.get(), std::string_view(target, static_cast<std::size_t>(n))))
      return core::fail_errno("memfd_create(pi-sandbox-symlink)");
    auto named = blob_name(git, files, deadline, memfd.get());
    if (!named) return std::unexpected(named.error());
    return Blob{kSymlink, *named};
  }
  if (!S_ISREG(st.st_mode)) return Blob{};
  if (static_cast<std::uint64_t>(st.st_size) > bytes_left)
    return core::fail(shown.string() + ": more than " + std::to_string(kCompareBytesBound) +
                      " bytes compared");
  // O_NONBLOCK: a FIFO put there after the fstatat does not hold the open.
  UniqueFd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return core::fail_errno("openat(" + shown.string() + ")");
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Blob{};
  bytes_left -= std::min<std::uint64_t>(bytes_left, static_cast<std::uint64_t>(st.st_size));
  auto named = blob_name(git, files, deadline, fd.get());
  if (!named) return std::unexpected(named.error());
  return Blob{(st.st_mode & 0100) != 0 ? 0100755u : 0100644u, *named};
}

/// Whether the entry at `path` (relative to the root) below the workspace was born after
/// `files.started` (statx(2) birth time; false where the file system records none).
bool born_after(const PackageFiles& files, const std::string& path) {
  struct statx stx {};
  if (::statx(AT_FDCWD, (files.root / path).c_str(), AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) != 0 ||
      (stx.stx_mask & STATX_BTIME) == 0)
    return false;
  return stx.stx_btime.tv_sec > files.started.tv_sec ||
         (stx.stx_btime.tv_sec == files.started.tv_sec &&
          stx.stx_btime.tv_nsec >= files.started.tv_nsec);
}

}  // namespace

Unfinished unfinished_writes(const PackageFiles& files, const std::vector<std::string>& targets,
                             const std::map<std::string, std::optional<FileStamp>>& stamps,
                             bool state_changed) {
  Unfinished result;
  std::set<std::string> changed;
  for (const auto& [path, was] : stamps)
    if (stamp_of(files.root / path) != was) changed.insert(path);
  // A command that changed no tracked file and nothing of git's state wrote nothing for git.
  if (changed.empty() && !state_changed) return result;
  // A repository that borrows objects (or links a pack or a loose object) would have `git
  // diff-tree` compare HEAD with a commit of a repository the command cannot read, and the line
  // name its paths.
  const auto git = host_git(files.writable);
  if (!git || !own_objects(files) || !own_loose_objects(files)) return result;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  std::size_t files_left = kCompareFilesBound, bytes_left = kCompareBytesBound;
  std::map<std::string, std::optional<Blob>> now;  // what current_blob() found, by path
  std::set<std::string> unchecked, written, outside;
  // What is at `path` now; nullopt also when it could not be read (then named if tracked).
  const auto current = [&](const std::string& path) -> std::optional<std::optional<Blob>> {
    if (const auto found = now.find(path); found != now.end()) return found->second;
    if (files_left == 0) return std::nullopt;
    --files_left;
    auto blob = current_blob(*git, files, deadline, path, bytes_left);
    if (!blob) return std::nullopt;
    return now.emplace(path, *blob).first->second;
  };
  std::size_t compared = 0;
  for (const auto& target : targets) {
    if (compared++ == kTargetCommitsBound) break;
    auto diff = target.ends_with("^3") ? untracked_diff(*git, files, deadline, target)
                                       : diff_to(*git, files, deadline, target);
    if (!diff) break;  // out of time, or no git run at all: nothing more is compared
    if (!*diff || (*diff)->outside.empty()) continue;
    bool explains = false;
    for (const auto& [path, wanted] : (*diff)->inside) {
      // A protected path is never compared (nor written): git cannot write one inside.
      if (written.contains(path) || is_guarded(files, path)) continue;
      const auto was = stamps.find(path);
      const bool tracked = was != stamps.end();
      // A tracked file missing as the command started is left as the command leaves it.
      if (tracked && (!was->second || !changed.contains(path))) continue;
      if (!tracked && (!wanted || !born_after(files, path))) continue;
      bool matches = false;
      if (!wanted) {  // the target deletes it: git removed it
        matches = !stamp_of(files.root / path);
      } else if (const auto found = current(path); !found) {
        if (tracked) unchecked.insert(path);
      } else {
        matches = *found == wanted;
      }
      if (matches) {
        written.insert(path);
        explains = true;
      }
    }
    if (explains) outside.insert((*diff)->outside.begin(), (*diff)->outside.end());
  }
  // The other changed files: the command's own edits, or what git merged from both sides (an
  // object no compared commit holds there); left as they are, and named.
  // One that holds what the index does (git wrote it anew with the same bytes) is as it was.
  std::map<std::string, Blob> indexed;
  for (const auto& e : files.before)
    if (e.stage == 0) indexed.emplace(e.path, Blob{e.mode, hex(e.oid)});
  if (!written.empty())
    for (const auto& path : changed) {
      if (written.contains(path) || is_guarded(files, path)) continue;
      const auto found = current(path);
      const auto entry = indexed.find(path);
      const bool same = found && *found && entry != indexed.end() && **found == entry->second;
      if (!same) unchecked.insert(path);
    }
  for (const auto& path : written) unchecked.erase(path);
  result.outside.assign(outside.begin(), outside.end());
  result.written.assign(written.begin(), written.end());
  result.unchecked.assign(unchecked.begin(), unchecked.end());
  return result;
}

}  // namespace pisandbox::sandbox::linux_
