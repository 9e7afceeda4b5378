// pisandbox::sandbox::linux_ — writing a workspace's files back as the index before a command
// recorded them (docs/security.md, "Repositories around the workspace"): every path reached
// from the workspace one directory at a time without following a symlink, none written in a
// protected path or in what looks like a git directory, the bytes checked to be the object.
#include "sandbox/linux/git_files.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/sandbox_policy.hpp"
#include "sandbox/linux/git_files_detail.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using namespace git_detail;

namespace git_detail {

/// The directories from the workspace down to a path's parent, each opened without following
/// a symlink (O_PATH); missing ones made (0777 less the umask, as git makes them) when `make`.
/// An empty vector when one is missing and not made.
core::Result<std::vector<UniqueFd>> open_parents(const fs::path& workspace,
                                                 const std::vector<std::string>& parts, bool make) {
  std::vector<UniqueFd> dirs;
  dirs.emplace_back(::open(workspace.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dirs.back().get() < 0) return core::fail_errno("open(" + workspace.string() + ")");
  fs::path shown = workspace;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    shown /= parts[i];
    const int parent = dirs.back().get();
    if (make && ::mkdirat(parent, parts[i].c_str(), 0777) != 0 && errno != EEXIST)
      return core::fail_errno("mkdirat(" + shown.string() + ")");
    UniqueFd next(
        ::openat(parent, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0 && errno == ENOENT && !make) return std::vector<UniqueFd>{};
    if (next.get() < 0) return core::fail_errno("openat(" + shown.string() + ")");
    dirs.push_back(std::move(next));
  }
  return dirs;
}

/// `path` (relative to the root) split below the workspace, or empty when it is not a plain
/// path inside it (a `..`, `.` or empty component, or `.git` in any case).
std::vector<std::string> parts_below(const std::string& inside, const std::string& path) {
  if (!path.starts_with(inside + "/")) return {};
  std::vector<std::string> parts;
  std::string_view rest = std::string_view(path).substr(inside.size() + 1);
  while (true) {
    const auto slash = rest.find('/');
    std::string part(rest.substr(0, slash));
    std::string lower = part;
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (part.empty() || part == "." || part == ".." || lower == ".git") return {};
    parts.push_back(std::move(part));
    if (slash == std::string_view::npos) return parts;
    rest.remove_prefix(slash + 1);
  }
}

}  // namespace git_detail

namespace {

/// Removes the file `path` (relative to the root) below the workspace that git added, then each
/// directory above it that is empty and was born after `started`.
core::Result<void> remove_added(const PackageFiles& files, const std::string& path) {
  const std::vector<std::string> parts = parts_below(files.inside, path);
  const fs::path workspace = files.root / files.inside;
  auto dirs = open_parents(workspace, parts, false);
  if (!dirs) return std::unexpected(dirs.error());
  if (dirs->empty()) return {};
  if (::unlinkat(dirs->back().get(), parts.back().c_str(), 0) != 0 && errno != ENOENT)
    return core::fail_errno("unlinkat(" + (files.root / path).string() + ")");
  for (std::size_t i = dirs->size() - 1; i > 0; --i) {
    struct statx stx {};
    const int parent = (*dirs)[i - 1].get();
    const char* name = parts[i - 1].c_str();
    if (::statx(parent, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) != 0 ||
        (stx.stx_mask & STATX_BTIME) == 0)
      break;
    const bool newer = stx.stx_btime.tv_sec > files.started.tv_sec ||
                       (stx.stx_btime.tv_sec == files.started.tv_sec &&
                        stx.stx_btime.tv_nsec >= files.started.tv_nsec);
    if (!newer || ::unlinkat(parent, name, AT_REMOVEDIR) != 0) break;
  }
  return {};
}

/// Writes the object of `entry` at `parts` below the workspace: a new file (or symlink) at a
/// temporary name, renamed over whatever is there.
core::Result<void> put_back(const std::string& git, const PackageFiles& files, Deadline deadline,
                            const policy::GitIndexEntry& entry,
                            const std::vector<std::string>& parts) {
  const fs::path workspace = files.root / files.inside;
  auto dirs = open_parents(workspace, parts, true);
  if (!dirs) return std::unexpected(dirs.error());
  const int dir = dirs->back().get();
  const std::string& name = parts.back();
  const std::string temp = "." + name + ".pi-sandbox-restore";
  const fs::path shown = files.root / entry.path;
  if (::unlinkat(dir, temp.c_str(), 0) != 0 && errno != ENOENT)
    return core::fail_errno("unlinkat(" + shown.string() + ".pi-sandbox-restore)");
  const std::string oid = hex(entry.oid);
  const std::vector<std::string> cat = {"cat-file", "blob", oid};
  if (auto own = own_loose_object(files, oid); !own) return own;
  if ((entry.mode & kTypeMask) == kSymlink) {
    auto target = run_git(git, files, GitConfig::Isolated, deadline, cat);
    if (!target) return std::unexpected(target.error());
    if (target->code != 0 || target->out.empty() || target->out.find('\0') != std::string::npos)
      return core::fail("git cat-file blob " + oid + ": exit " + std::to_string(target->code));
    UniqueFd memfd(::memfd_create("pi-sandbox-symlink", MFD_CLOEXEC));
    if (memfd.get() < 0 || !core::write_all(memfd.get(), target->out))
      return core::fail_errno("memfd_create(pi-sandbox-symlink)");
    if (auto same = is_object(git, files, deadline, memfd.get(), oid); !same) return same;
    if (::symlinkat(target->out.c_str(), dir, temp.c_str()) != 0)
      return core::fail_errno("symlinkat(" + shown.string() + ".pi-sandbox-restore)");
  } else {
    const mode_t mode = (entry.mode & 0100) != 0 ? 0777 : 0666;
    UniqueFd fd(
        ::openat(dir, temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (fd.get() < 0) return core::fail_errno("openat(" + shown.string() + ".pi-sandbox-restore)");
    auto wrote = run_git(git, files, GitConfig::Isolated, deadline, cat, -1, fd.get());
    auto same = !wrote ? core::Result<void>(std::unexpected(wrote.error()))
                : wrote->code != 0
                    ? core::Result<void>(core::fail("git cat-file blob " + oid + ": exit " +
                                                    std::to_string(wrote->code)))
                    : is_object(git, files, deadline, fd.get(), oid);
    if (!same) {
      ::unlinkat(dir, temp.c_str(), 0);
      return same;
    }
  }
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir, temp.c_str(), 0);
    return std::unexpected(core::sys_error("renameat(" + shown.string() + ")", err));
  }
  return {};
}

}  // namespace

namespace git_detail {

/// Whether `path` (relative to the root) is a protected path, lies below one, or has a first
/// component below a pattern row's directory that the row matches: never written or removed.
bool is_guarded(const PackageFiles& files, const std::string& path) {
  const fs::path full = (files.root / path).lexically_normal();
  const auto matched = [&](const policy::ProtectedPattern& row) {
    const fs::path below = full.lexically_relative(row.dir);
    return policy::is_within(full, row.dir) && full != row.dir &&
           policy::matches_name_pattern(row.pattern, below.begin()->string());
  };
  return std::ranges::any_of(files.protected_paths,
                             [&](const fs::path& p) { return policy::is_within(full, p); }) ||
         std::ranges::any_of(files.protected_patterns, matched);
}

}  // namespace git_detail

namespace {

/// Whether `path` (relative to the root) lies below a directory of the workspace (the workspace
/// itself included) that is a git directory, or would be one once the files of `made` (relative
/// to the root, sorted) were made: one holding `HEAD` and either `commondir` or both `objects`
/// and `refs` (gitrepository-layout(5)). git takes such a directory for a repository when it
/// starts in it or a `.git` file names it, and runs the hooks of its `hooks/`. The guard takes
/// those out of a repository the command makes, after the command ("The guard"); the put-back
/// comes later, so it makes or removes nothing in one. A path longer than PATH_MAX (which git
/// does not write) counts as one, so that no index the command wrote makes this cost more than
/// PATH_MAX lstat(2) calls a path.
bool in_git_dir(const PackageFiles& files, const std::string& path,
                const std::vector<std::string>& made) {
  if (path.size() >= PATH_MAX) return true;
  // Whether `entry` is one of `made` or a directory above one.
  const auto is_made = [&](const std::string& entry) {
    const auto at = std::ranges::lower_bound(made, entry);
    return at != made.end() && at->starts_with(entry) &&
           (at->size() == entry.size() || (*at)[entry.size()] == '/');
  };
  const auto has = [&](const std::string& dir, const char* name) {
    const std::string entry = dir + "/" + name;
    struct stat st {};
    return is_made(entry) || ::lstat((files.root / entry).c_str(), &st) == 0;
  };
  for (auto slash = path.find('/', files.inside.size()); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    // Not through a symlink (the put-back opens none): nothing is asked of where it leads; and
    // below a directory that is not there and not made, nothing is.
    struct stat st {};
    if (::lstat((files.root / dir).c_str(), &st) == 0 ? !S_ISDIR(st.st_mode) : !is_made(dir))
      return false;
    if (has(dir, "HEAD") && (has(dir, "commondir") || (has(dir, "objects") && has(dir, "refs"))))
      return true;
  }
  return false;
}

/// Removes each of `removed` (deepest first) and writes each of `rewritten` (but protected
/// paths, which are left alone, and those a checkout may convert, which go to `result.left`),
/// recording what fails.
void apply(const PackageFiles& files, std::vector<std::string> removed,
           const std::vector<policy::GitIndexEntry>& rewritten, PutBack& result) {
  const auto failed = [&](const std::string& path, const core::Error& error) {
    result.failed.push_back(path);
    if (result.error.empty()) result.error = error.describe();
  };
  // Deepest first, so that a directory git made for a file is empty when it is reached.
  std::ranges::sort(removed, [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  // What the put-back would make.
  std::vector<std::string> made;
  for (const auto& e : rewritten) made.push_back(e.path);
  std::ranges::sort(made);
  // git cannot write a protected path inside: an index that says it did is the command's, and
  // it is left without a word. A path in what looks like a git directory is named: git may
  // have written it (a package whose own root holds `HEAD`, `objects/` and `refs/`).
  const auto guarded = [&](const std::string& path) {
    if (is_guarded(files, path)) return true;
    if (!in_git_dir(files, path, made)) return false;
    failed(path, core::Error{(files.root / path).string() +
                             ": below a directory that looks like a git directory (HEAD and "
                             "commondir, or HEAD, objects/ and refs/: gitrepository-layout(5)), "
                             "where nothing is put back"});
    return true;
  };
  std::erase_if(removed, guarded);
  std::vector<policy::GitIndexEntry> kept;
  for (const auto& e : rewritten)
    if (!guarded(e.path)) kept.push_back(e);
  for (const auto& path : removed)
    if (auto gone = remove_added(files, path); !gone) failed(path, gone.error());
  if (kept.empty()) return;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  const auto git = host_git(files.writable);
  auto ready = git ? own_objects(files)
                   : core::Result<void>(core::fail("no git outside the writable areas in PATH"));
  std::vector<const policy::GitIndexEntry*> asked;
  for (const auto& e : kept) asked.push_back(&e);
  auto skip = ready ? converted(*git, files, deadline, asked)
                    : core::Result<std::set<std::string>>(std::unexpected(ready.error()));
  for (const auto& e : kept) {
    if (!skip) {
      failed(e.path, skip.error());
    } else if (skip->contains(e.path)) {
      result.left.push_back(e.path);
    } else if (auto put = put_back(*git, files, deadline, e, parts_below(files.inside, e.path));
               !put) {
      failed(e.path, put.error());
    }
  }
}

}  // namespace

PutBack put_back_files(const PackageFiles& files) {
  std::map<std::string, const policy::GitIndexEntry*> before;
  std::set<std::string> conflicted;
  for (const auto& e : files.before) {
    if (e.stage == 0)
      before.emplace(e.path, &e);
    else
      conflicted.insert(e.path);
  }
  PutBack result;
  std::vector<policy::GitIndexEntry> rewritten;
  std::vector<std::string> added;
  for (const auto& path : files.written) {
    const auto found = before.find(path);
    const bool plain = !parts_below(files.inside, path).empty();
    if (!plain || conflicted.contains(path))
      result.left.push_back(path);
    else if (found == before.end())
      added.push_back(path);
    else if (has_file(found->second->mode))
      rewritten.push_back(*found->second);
    else
      result.left.push_back(path);  // a gitlink: git writes no file for it
  }
  apply(files, std::move(added), rewritten, result);
  std::ranges::sort(result.left);
  std::ranges::sort(result.failed);
  return result;
}

PutBack put_back_stashed(const PackageFiles& files, const std::string& stash) {
  PutBack result;
  const Deadline deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(kGitRestoreTimeoutSeconds);
  const auto git = host_git(files.writable);
  auto ready = git ? own_objects(files)
                   : core::Result<void>(core::fail("no git outside the writable areas in PATH"));
  auto worktree =
      ready ? tree_of(*git, files, deadline, stash)
            : decltype(tree_of(*git, files, deadline, stash))(std::unexpected(ready.error()));
  auto head = worktree ? tree_of(*git, files, deadline, stash + "^1") : worktree;
  std::vector<policy::GitIndexEntry> rewritten;
  std::vector<std::string> removed;
  for (const auto& e : files.before) {
    if (e.stage != 0 || !has_file(e.mode) || parts_below(files.inside, e.path).empty()) continue;
    if (!head) break;
    const auto saved = worktree->find(e.path), reset = head->find(e.path);
    const auto same = [](const policy::GitIndexEntry& a, const policy::GitIndexEntry& b) {
      return a.mode == b.mode && a.oid == b.oid;
    };
    // What the stash saved of the file (its working-tree bytes) against what its reset to HEAD
    // wrote there.
    if (saved == worktree->end() && reset != head->end())
      removed.push_back(e.path);
    else if (saved != worktree->end() &&
             (reset == head->end() || !same(saved->second, reset->second)))
      rewritten.push_back(saved->second);
  }
  if (!head) {
    result.error = head.error().describe();
    return result;
  }
  apply(files, std::move(removed), rewritten, result);
  std::ranges::sort(result.left);
  std::ranges::sort(result.failed);
  return result;
}

std::optional<FileStamp> stamp_of(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{static_cast<std::uint64_t>(st.st_dev),
                   static_cast<std::uint64_t>(st.st_ino),
                   static_cast<std::uint64_t>(st.st_size),
                   static_cast<std::uint32_t>(st.st_mode),
                   st.st_mtim.tv_sec,
                   st.st_mtim.tv_nsec,
                   st.st_ctim.tv_sec,
                   st.st_ctim.tv_nsec};
}

}  // namespace pisandbox::sandbox::linux_
