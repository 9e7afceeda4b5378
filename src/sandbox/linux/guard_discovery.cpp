// The guard's knowledge of what the command changed (guard.hpp): the watched trees below the
// writable roots, git's discovery rules for each entry made or changed, the cleaning of the
// repositories they designate, the gitlinks and the privilege bits (docs/security.md, "The
// guard"). The file helpers it shares with guard.cpp: guard_files.hpp.
#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <unordered_set>

#include "policy/git_index.hpp"
#include "policy/protected_scan.hpp"
#include "sandbox/linux/guard.hpp"
#include "sandbox/linux/guard_files.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using guard_files::exchange_if;
using guard_files::FileRead;
using guard_files::key_list;
using guard_files::read_at;
using guard_files::Swap;

namespace {

/// Events that say an entry of a directory below a writable root was made or changed (not
/// IN_MODIFY: every write(2) would be one; a file is inspected when it is closed).
constexpr std::uint32_t kTreeMask =
    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR | IN_EXCL_UNLINK;

/// An index larger than this is not read for gitlinks (100 000 files make about 10 MiB).
constexpr std::size_t kMaxIndexBytes = std::size_t{256} << 20;

}  // namespace

fs::path deepest_root(const fs::path& path, const std::vector<fs::path>& roots) {
  fs::path found;
  for (const auto& root : roots)
    if (policy::is_within(path, root) && root.string().size() > found.string().size()) found = root;
  return found;
}

fs::path Guard::writable_root_of(const fs::path& path) const {
  return deepest_root(path, plan_.writable_roots);
}

void Guard::check_gitlinks() {
  for (auto& index : indexes_) {
    UniqueFd parent = walk_to_parent(index.where.base, index.where.index, false);
    if (!parent) continue;
    struct stat st {};
    if (::fstatat(parent.get(), "index", &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
      continue;
    // Unchanged since the command started: nothing was registered (the usual case, no read).
    if (index.start && st.st_ino == index.start->st_ino && st.st_size == index.start->st_size &&
        st.st_mtim.tv_sec == index.start->st_mtim.tv_sec &&
        st.st_mtim.tv_nsec == index.start->st_mtim.tv_nsec)
      continue;
    const FileRead read =
        read_at(opener_, parent.get(), "index", index.where.index, kMaxIndexBytes);
    if (!read.content || read.too_large) continue;
    auto links = policy::index_gitlinks(*read.content, 20);
    if (!links) links = policy::index_gitlinks(*read.content, 32);  // a SHA-256 repository
    if (!links) continue;                                           // git cannot read it either
    for (const auto& link : *links) {
      // A gitlink registered by the command: host `git status` in the outer repository runs
      // git in it, with its configuration.
      const fs::path dir = (index.where.worktree_root / link).lexically_normal();
      const fs::path base = writable_root_of(dir);
      if (base.empty()) continue;  // read-only here: not the command's
      UniqueFd holder = walk_to_parent(base, dir / ".git", false);
      if (!holder) continue;
      struct stat git {};
      if (::fstatat(holder.get(), ".git", &git, AT_SYMLINK_NOFOLLOW) != 0) continue;
      fs::path git_dir;
      if (S_ISDIR(git.st_mode)) {
        git_dir = dir / ".git";
      } else if (S_ISREG(git.st_mode)) {
        const FileRead file = read_at(opener_, holder.get(), ".git", dir / ".git", 4096);
        if (!file.content || !file.content->starts_with("gitdir:")) continue;
        std::string target = file.content->substr(7);
        while (!target.empty() && (target.front() == ' ' || target.front() == '\t'))
          target.erase(0, 1);
        while (!target.empty() && (target.back() == '\n' || target.back() == '\r' ||
                                   target.back() == ' ' || target.back() == '\t'))
          target.pop_back();
        if (target.empty()) continue;
        git_dir =
            (fs::path(target).is_absolute() ? fs::path(target) : dir / target).lexically_normal();
      } else {
        continue;
      }
      if (std::ranges::find(plan_.known_git_dirs, git_dir) != plan_.known_git_dirs.end()) continue;
      if (writable_root_of(git_dir).empty()) continue;  // one the command could not have written
      // Git's discovery rules decide what in it the command changed (settle_repository()).
      add_candidate(git_dir, false);
    }
  }
}

namespace {

/// Whether `name` is one of the entries whose appearance makes a directory a git directory for
/// git (setup.c is_git_directory(): `HEAD`, and `objects/` and `refs/` in the common directory
/// that `commondir` names). Not `HEAD` itself: git rewrites it in every repository (`git
/// checkout`); a directory that lacked it at the start is caught by the start walk.
bool designating_entry(const std::string& name) {
  return name == "commondir" || name == "objects" || name == "refs";
}

/// Whether an entry named `name` can make its directory a git directory or change what git run
/// there does (gitrepository-layout(5)).
bool git_entry(const std::string& name) {
  return name == "HEAD" || designating_entry(name) || name == "config" ||
         name == "config.worktree" || name == "hooks";
}

bool contains(const std::vector<fs::path>& paths, const fs::path& path) {
  return std::ranges::find(paths, path) != paths.end();
}

fs::path real_or_lexical(const fs::path& path) {
  std::error_code error;
  fs::path real = fs::weakly_canonical(path, error);
  return error ? path.lexically_normal() : real;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() &&
         (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' || text.back() == '\t'))
    text.remove_suffix(1);
  return std::string(text);
}

/// One entry of a directory: its name and whether it is a directory (readdir(3)'s d_type; an
/// lstat only where the file system does not say).
struct DirEntry {
  std::string name;
  bool directory = false;
  bool regular = false;
};

/// The entries of the directory `dir_fd` (opened O_RDONLY, read from its start), "." and ".."
/// left out; nullopt when it cannot be read. getdents64(2) into one buffer: no DIR, no
/// allocation per directory but the names.
std::optional<std::vector<DirEntry>> dir_entries(int dir_fd) {
  alignas(8) static thread_local char buffer[32768];
  std::vector<DirEntry> entries;
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return entries;
    for (long at = 0; at < n;) {
      struct Record {
        ino64_t ino;
        off64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Record*>(buffer + at);
      at += e->reclen;
      const std::string_view name = e->name;
      if (name == "." || name == "..") continue;
      DirEntry entry{std::string(name), e->type == DT_DIR, e->type == DT_REG};
      if (e->type == DT_UNKNOWN) {
        struct stat st {};
        if (::fstatat(dir_fd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
          entry.directory = S_ISDIR(st.st_mode);
          entry.regular = S_ISREG(st.st_mode);
        }
      }
      entries.push_back(std::move(entry));
    }
  }
}

}  // namespace

std::optional<fs::path> gitfile_target(std::string_view content, const fs::path& dir) {
  if (!content.starts_with("gitdir:")) return std::nullopt;
  content.remove_prefix(7);
  // git reads the first line only.
  const std::string target = trimmed(content.substr(0, content.find('\n')));
  if (target.empty()) return std::nullopt;
  const fs::path path(target);
  return (path.is_absolute() ? path : dir / path).lexically_normal();
}

core::Result<mode_t> clear_privilege_bits(int dir_fd, const std::string& name,
                                          const fs::path& shown) {
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return std::unexpected(core::sys_error("fstatat(" + shown.string() + ")", errno));
  constexpr mode_t kBits = S_ISUID | S_ISGID;
  if (!S_ISREG(st.st_mode) || (st.st_mode & kBits) == 0) return mode_t{0};
  UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  std::string call = "fchmod(" + shown.string() + ")";
  int done = -1;
  if (fd) {
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return mode_t{0};
    done = ::fchmod(fd.get(), st.st_mode & 07777 & ~kBits);
  } else {
    // Not readable (mode 4111): the inode held by an O_PATH descriptor, changed through its
    // magic link (fchmod(2) refuses O_PATH descriptors).
    const int err = errno;
    fd.reset(::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return std::unexpected(core::sys_error("openat(" + shown.string() + ", O_PATH)", err));
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return mode_t{0};
    const std::string link = "/proc/self/fd/" + std::to_string(fd.get());
    call = "chmod(" + shown.string() + ")";
    done = ::chmod(link.c_str(), st.st_mode & 07777 & ~kBits);
  }
  if (done != 0) return std::unexpected(core::sys_error(call, errno));
  return static_cast<mode_t>(st.st_mode & kBits);
}

UniqueFd Guard::open_below(const fs::path& base, const fs::path& path, int flags) {
  const int root = base_fd(base);
  if (root < 0) return {};
  const fs::path relative = path.lexically_relative(base);
  if (relative.empty() || relative.begin()->string() == "..") return {};
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const long fd = ::syscall(SYS_openat2, root, relative.c_str(), &how, sizeof how);
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    // EAGAIN: a rename raced the lookup.
    if (errno != EAGAIN && errno != EINTR) return {};
  }
  return {};
}

void Guard::watch_start_trees() {
  // Breadth-first over every root at once, so that a bound cuts the deepest directories.
  std::vector<std::pair<fs::path, fs::path>> queue;
  for (const auto& root : plan_.writable_roots) queue.emplace_back(root, root);
  start_walk_ = true;
  for (std::size_t next = 0; next < queue.size(); ++next) {
    if (watch_inodes_.size() >= plan_.start_watch_bound) break;
    const auto [dir, base] = queue[next];
    UniqueFd fd = open_below(base, dir, O_RDONLY | O_DIRECTORY);
    if (!fd || watch(fd.get(), dir, base, kTreeMask) < 0) continue;
    start_dirs_.insert(dir);
    const auto entries = dir_entries(fd.get());
    if (!entries) continue;
    std::set<std::string_view> seen;
    for (const auto& e : *entries) seen.insert(e.name);
    if (dir.filename() == ".git" ||
        (seen.contains("HEAD") &&
         (seen.contains("commondir") || (seen.contains("objects") && seen.contains("refs"))))) {
      start_git_dirs_.insert(dir);
      // Its configuration is compared with what it holds now, as a known repository's is: a
      // command that rewrites it (`git submodule update` does) takes back only what it adds.
      for (const char* leaf : {"config", "config.worktree"}) guard_config({dir / leaf, base});
    }
    for (const auto& [name, directory, regular] : *entries) {
      if (directory) {
        queue.emplace_back(dir / name, base);
      } else if (name == ".git" && regular) {
        const FileRead file = read_at(opener_, fd.get(), name, dir / name, 4096);
        if (file.content)
          if (auto target = gitfile_target(*file.content, dir))
            start_git_dirs_.insert(real_or_lexical(*target));
      }
    }
  }
  start_walk_ = false;
}

void Guard::watch_new_tree(const fs::path& top, const fs::path& base) {
  // Watched first, then read: what is made in it meanwhile is either read or an event.
  std::vector<fs::path> queue{top};
  for (std::size_t next = 0; next < queue.size(); ++next) {
    const fs::path dir = queue[next];
    UniqueFd fd = open_below(base, dir, O_RDONLY | O_DIRECTORY);
    if (!fd) continue;
    watch(fd.get(), dir, base, kTreeMask);
    const auto entries = dir_entries(fd.get());
    if (!entries) continue;
    for (const auto& entry : *entries) {
      note_changed(dir / entry.name, base);
      if (entry.directory) queue.push_back(dir / entry.name);
    }
  }
}

void Guard::note_changed(const fs::path& path, const fs::path& base) {
  changed_.insert(path.native());
  pending_.emplace_back(path, base);
}

void Guard::add_candidate(const fs::path& dir, bool designated) {
  auto [it, added] = candidates_.emplace(dir, designated);
  if (!added) it->second = it->second || designated;
}

void Guard::inspect(const fs::path& path, const fs::path& base) {
  const std::string leaf = path.filename().string();
  const fs::path dir = path.parent_path();
  // Most entries are ordinary files: one lstat says so. (Through whatever the path holds now;
  // what is acted on is opened again below without following a symlink.)
  const bool named = leaf == ".git" || git_entry(leaf) || dir.filename() == "hooks";
  struct stat st {};
  const int root = base_fd(base);
  const fs::path relative = path.lexically_relative(base);
  if (root < 0 || relative.empty() ||
      ::fstatat(root, relative.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return;
  if (!named && !(S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) != 0)) return;
  UniqueFd parent = open_below(base, dir, O_PATH | O_DIRECTORY);
  if (!parent) return;
  if (::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) != 0) {
    // The host mounts the workspace without nosuid: a setuid file left there gives whoever
    // runs it the owner's identity.
    UniqueFd readable = open_below(base, path.parent_path(), O_RDONLY | O_DIRECTORY);
    const auto cleared = readable ? clear_privilege_bits(readable.get(), leaf, path)
                                  : core::Result<mode_t>(std::unexpected(core::sys_error(
                                        "openat2(" + path.parent_path().string() + ")", errno)));
    if (!cleared)
      notices_.push_back("warning: " + path.string() +
                         " is setuid or setgid and the guard could not clear it (" +
                         cleared.error().message + "); remove it before anyone runs it");
    else if (*cleared != 0)
      notices_.push_back(
          std::string("cleared the ") + ((*cleared & S_ISUID) != 0 ? "setuid" : "setgid") +
          ((*cleared & S_ISUID) != 0 && (*cleared & S_ISGID) != 0 ? "+setgid" : "") + " bit of " +
          path.string() + " (the command made it; the host mounts the workspace without nosuid)");
  }
  if (leaf == ".git") {
    if (S_ISDIR(st.st_mode)) {
      add_candidate(path, true);
    } else if (S_ISLNK(st.st_mode)) {
      // git follows it (stat(2)): what it names is the git directory.
      add_candidate(real_or_lexical(path), true);
    } else if (S_ISREG(st.st_mode)) {
      const FileRead file = read_at(opener_, parent.get(), leaf, path, 4096);
      if (file.content)
        if (auto target = gitfile_target(*file.content, dir))
          add_candidate(real_or_lexical(*target), true);
    }
    return;
  }
  if (git_entry(leaf)) add_candidate(dir, designating_entry(leaf));
  // A hook: the directory above may be the git directory.
  if (dir.filename() == "hooks" && dir != base) add_candidate(dir.parent_path(), false);
}

void Guard::inspect_pending(bool final) {
  std::unordered_set<std::string> seen;
  while (!pending_.empty()) {
    auto batch = std::exchange(pending_, {});
    for (const auto& [path, base] : batch)
      if (seen.insert(path.native()).second) inspect(path, base);
  }
  // Live, only what this batch named; the last sweep looks at every candidate again, as the
  // command left it.
  const auto batch = std::exchange(candidates_, {});
  for (const auto& [dir, designated] : batch) {
    auto [it, added] = all_candidates_.emplace(dir, designated);
    if (!added) it->second = it->second || designated;
  }
  for (const auto& [dir, designated] : final ? all_candidates_ : batch)
    settle_repository(dir, designated, final);
}

void Guard::walk_changed_since_start() {
  const auto changed_since_start = [&](const struct stat& st) {
    return st.st_ctim.tv_sec > start_time_.tv_sec ||
           (st.st_ctim.tv_sec == start_time_.tv_sec && st.st_ctim.tv_nsec >= start_time_.tv_nsec);
  };
  for (const auto& root : plan_.writable_roots) {
    std::vector<fs::path> queue{root};
    for (std::size_t next = 0; next < queue.size(); ++next) {
      const fs::path dir = queue[next];
      UniqueFd fd = open_below(root, dir, O_RDONLY | O_DIRECTORY);
      if (!fd) continue;
      const auto names = entry_names(fd.get());
      if (!names) continue;
      for (const auto& name : *names) {
        struct stat st {};
        if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (changed_since_start(st)) note_changed(dir / name, root);
        if (S_ISDIR(st.st_mode)) queue.push_back(dir / name);
      }
    }
  }
}

void Guard::settle_repository(const fs::path& git_dir, bool designated, bool final) {
  const fs::path base = writable_root_of(git_dir);
  if (base.empty()) return;  // a repository the command could not have written
  UniqueFd dir = open_below(base, git_dir, O_PATH | O_DIRECTORY);
  if (!dir) return;
  // As git's access(2) checks: through a symlink (`objects -> /` is a directory to git).
  const auto has = [&](int fd, const char* name, bool directory) {
    struct stat st {};
    return ::fstatat(fd, name, &st, directory ? 0 : AT_SYMLINK_NOFOLLOW) == 0 &&
           (directory ? S_ISDIR(st.st_mode) : !S_ISDIR(st.st_mode));
  };
  // git's is_git_directory(): HEAD here, objects/ and refs/ in the common directory. A `.git`
  // directory is treated as one whatever it holds: git may complete it later.
  fs::path common = git_dir;
  const FileRead commondir = read_at(opener_, dir.get(), "commondir", git_dir / "commondir", 4096);
  if (commondir.content && !trimmed(*commondir.content).empty()) {
    const fs::path named(trimmed(*commondir.content));
    common = real_or_lexical(named.is_absolute() ? named : git_dir / named);
  }
  UniqueFd common_fd = common == git_dir ? UniqueFd(::fcntl(dir.get(), F_DUPFD_CLOEXEC, 0))
                                         : open_below(base, common, O_PATH | O_DIRECTORY);
  const bool common_inside = static_cast<bool>(common_fd);
  const bool is_git_dir = has(dir.get(), "HEAD", false) && common_inside &&
                          has(common_fd.get(), "objects", true) &&
                          has(common_fd.get(), "refs", true);
  if (!is_git_dir && git_dir.filename() != ".git") return;
  // Designated by the command: it made the directory, or what makes git use it; or the guard
  // walked it at the start and it was not a git directory then.
  designated = designated || changed(git_dir) || changed(git_dir / "commondir") ||
               changed(common / "objects") || changed(common / "refs") ||
               (start_dirs_.contains(git_dir) && !start_git_dirs_.contains(git_dir));
  const bool known = contains(plan_.known_git_dirs, git_dir);
  // A repository that existed at the start is never the command's as a whole, whatever of it
  // the command rewrote (`git submodule update`, `git worktree repair` rewrite `.git` files):
  // its configuration is compared with the start (check_config), its hooks go only where the
  // command changed them.
  if (known || start_git_dirs_.contains(git_dir)) designated = false;
  // A new linked worktree (`git worktree add`) of a repository that existed: its own files are
  // the command's, the common directory's hooks and configuration only where it changed them.
  const bool common_existed = common != git_dir && (contains(plan_.known_git_dirs, common) ||
                                                    start_git_dirs_.contains(common));
  const bool whole_common = designated && !common_existed;
  std::vector<std::pair<fs::path, bool>> configs{{git_dir / "config.worktree", designated}};
  if (common != git_dir || !known) configs.emplace_back(common / "config", whole_common);
  if (common != git_dir) configs.emplace_back(git_dir / "config", designated);
  // A known repository's hooks are read-only where the scan found them; elsewhere what the
  // command changed in them goes.
  const fs::path hooks_of = common_inside ? common : fs::path{};
  if (designated && git_dir.filename() == ".git" &&
      std::ranges::none_of(
          indexes_, [&](const GitIndexState& i) { return i.where.index == git_dir / "index"; }))
    indexes_.push_back({{git_dir / "index", git_dir.parent_path(), base}, std::nullopt});
  clean_repository(
      hooks_of, whole_common, configs, final,
      designated ? "a repository the command created" : "the repository " + git_dir.string());
}

void Guard::clean_repository(const fs::path& common_dir, bool all_hooks,
                             const std::vector<std::pair<fs::path, bool>>& configs, bool final,
                             const std::string& origin) {
  if (!common_dir.empty())
    if (const fs::path base = writable_root_of(common_dir); !base.empty())
      if (UniqueFd hooks = open_below(base, common_dir / "hooks", O_RDONLY | O_DIRECTORY)) {
        std::vector<std::string> names =
            entry_names(hooks.get()).value_or(std::vector<std::string>{});
        std::erase_if(names, [&](const std::string& name) {
          return name.ends_with(".sample") || !(all_hooks || changed(common_dir / "hooks") ||
                                                changed(common_dir / "hooks" / name));
        });
        std::ranges::sort(names);
        for (const auto& hook : names)
          move_out(hooks.get(), hook, common_dir / "hooks" / hook,
                   "a Git hook in " + origin + ": git on the host would run it");
      }
  for (const auto& [path, all] : configs) {
    // Guarded by content from the start: compared with what it held then.
    if (std::ranges::any_of(configs_, [&](const Config& c) { return c.where.path == path; }))
      continue;
    if (!all && !changed(path)) continue;
    clean_config(path, final, origin);
  }
}

void Guard::clean_config(const fs::path& path, bool final, const std::string& origin) {
  const fs::path base = writable_root_of(path);
  if (base.empty()) return;
  UniqueFd parent = open_below(base, path.parent_path(), O_PATH | O_DIRECTORY);
  if (!parent) return;
  const std::string leaf = path.filename().string();
  // A writer (git's config.lock renamed into place) may replace the file while it is being
  // cleaned: then it is read again, never overwritten with a cleaned older version (bounded).
  for (int round = 0; round < 8; ++round) {
    const FileRead read = read_at(opener_, parent.get(), leaf, path);
    if (!read.content || read.not_regular) {
      if (read.not_regular && final) {
        Config config{{path, base}, std::nullopt, {}};
        check_config(config, true);
      }
      return;
    }
    const auto scan = policy::scan_git_config(*read.content);
    // A half-written file is read again when its writer is done.
    if (scan.malformed && !final) return;
    if (!scan.malformed && scan.findings.empty()) return;
    // No content from the start to put back: the configuration without the offending entries.
    const std::string cleaned = policy::without_findings(*read.content, scan.findings);
    const auto swap =
        exchange_if(opener_, parent.get(), leaf, path, cleaned, read.mode, read.dev, read.inode);
    if (swap && *swap == Swap::Changed) continue;
    auto kept = quarantine_bytes(quarantine_, *read.content, path, "a change to " + path.string());
    std::string line = "cleaned " + path.string() + " in " + origin + ": " +
                       (scan.malformed ? "git cannot read it (" + scan.malformed_reason + ")"
                                       : "it set " + key_list(scan.findings) +
                                             ", which is not on the allowlist of keys that run "
                                             "nothing");
    if (!swap) {
      // No new file could be written (a full disk): made inert in place, and the command stops.
      Config config{{path, base}, std::nullopt, {}};
      line += "; " + undo_in_place(config, parent.get(), {read.not_regular, read.dev, read.inode},
                                   cleaned, swap.error());
    }
    if (kept) line += "; the original is kept in the quarantine: " + kept->stored.string();
    notices_.push_back(std::move(line));
    return;
  }
}

void Guard::final_discovery() {
  if (tree_) (void)drain_events();
  if (knowledge_lost_ || blind_) walk_changed_since_start();
  inspect_pending(true);
  // The repositories the command registered as gitlinks (their indexes: the known ones and
  // those just found), as they are now.
  const std::size_t before = all_candidates_.size();
  check_gitlinks();
  if (!candidates_.empty() || all_candidates_.size() != before) inspect_pending(true);
}

}  // namespace pisandbox::sandbox::linux_
