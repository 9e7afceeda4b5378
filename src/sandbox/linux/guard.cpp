// The guard (guard.hpp): starting it, the guarded names and patterns, the undo of a change to a
// guarded git configuration, the inotify events and the lines for the user. What the command
// changed below the writable roots and git's discovery rules: guard_discovery.cpp; the file
// helpers both use: guard_files.hpp (docs/security.md, "The guard").
#include "sandbox/linux/guard.hpp"

#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "policy/protected_scan.hpp"
#include "sandbox/linux/guard_files.hpp"
#include "sandbox/linux/placeholders.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using guard_files::exchange_if;
using guard_files::FileRead;
using guard_files::key_list;
using guard_files::make_inert;
using guard_files::out_of_resources;
using guard_files::read_at;
using guard_files::replace_at;
using guard_files::Swap;

namespace {

/// Events that can make a guarded name or configuration appear or change.
constexpr std::uint32_t kWatchMask =
    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_ONLYDIR | IN_EXCL_UNLINK;

/// The names from `base` down to `path`, as path.lexically_relative(base) gives them (less
/// empty and "." parts). The plan's paths are absolute and lexically normal, so this is mostly
/// a split of what follows `base`; anything else takes lexically_relative(), which is slow
/// enough to show on the command's path (every guarded name is split at each check).
std::vector<std::string> components(const fs::path& base, const fs::path& path) {
  std::string_view b = base.native();
  const std::string_view p = path.native();
  while (b.size() > 1 && b.back() == '/') b.remove_suffix(1);
  if (b.starts_with('/') && p.starts_with(b) &&
      (b.size() == 1 || p.size() == b.size() || p[b.size()] == '/')) {
    std::vector<std::string> parts;
    std::string_view rest = p.substr(b.size());
    if (rest.starts_with('/')) rest.remove_prefix(1);
    bool plain = true;
    while (!rest.empty() && plain) {
      const std::size_t end = rest.find('/');
      const std::string_view part = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      // An empty part other than the last (a doubled slash), "." or "..": not lexically normal.
      plain = !part.empty() && part != "." && part != "..";
      if (plain) parts.emplace_back(part);
      if (end != std::string_view::npos && rest.empty()) break;  // a trailing slash
    }
    if (plain) return parts;
  }
  std::vector<std::string> parts;
  for (const auto& part : path.lexically_relative(base))
    if (!part.empty() && part != ".") parts.push_back(part.string());
  return parts;
}

/// Whether two configuration texts hold the same lines once blank lines, comment lines, a
/// UTF-8 byte order mark and lines that are only a section header are set aside (whitespace at
/// either end of a line ignored).
bool same_entries(std::string_view a, std::string_view b) {
  const auto lines = [](std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
      const auto end = text.find('\n');
      std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
      if (line.starts_with("\xef\xbb\xbf")) line.remove_prefix(3);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
        line.remove_suffix(1);
      const bool header_only =
          line.starts_with('[') && line.ends_with(']') && line.find(']') == line.size() - 1;
      const bool comment = line.starts_with('#') || line.starts_with(';');
      if (!line.empty() && !header_only && !comment) out.push_back(line);
    }
    return out;
  };
  return lines(a) == lines(b);
}

}  // namespace

void Guard::stop_watching() {
  if (!inotify_) return;
  // What happened until now is noted before the watches go (final_discovery()).
  (void)drain_events();
  // Each watch removed now: the kernel frees its mark after an SRCU grace period (10-20 ms on
  // a loaded 2-CPU machine), in the background, while pid 1 kills, sweeps and exits; the last
  // close of the instance then waits only for what is left of it.
  for (const auto& [wd, inode] : watch_inodes_) (void)::inotify_rm_watch(inotify_.get(), wd);
  watch_inodes_.clear();
  watch_dirs_.clear();
  watched_.clear();
  placeholder_watches_.clear();
  watching_ = false;
}

core::Result<Guard> Guard::start(const GuardPlan& plan, Quarantine quarantine, Watch watch,
                                 FirstCheck first) {
  Guard guard(plan, std::move(quarantine));
  guard.starting_ = true;
  (void)::clock_gettime(CLOCK_REALTIME_COARSE, &guard.start_time_);
  guard.tree_ = watch == Watch::Yes && !plan.writable_roots.empty();
  if (watch == Watch::Yes && (!plan.names.empty() || !plan.configs.empty() ||
                              !plan.patterns.empty() || !plan.writable_roots.empty())) {
    guard.inotify_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!guard.inotify_)
      return std::unexpected(core::sys_error("inotify_init1()", errno,
                                             "hint: raise fs.inotify.max_user_instances, or set "
                                             "filesystem.protection to \"strict\""));
  }
  for (const auto& name : plan.names) {
    for (const auto& part : components(name.base, name.path)) guard.relevant_names_.insert(part);
  }
  // A pattern's directory is a writable root: watched from the start (walk_to_parent() watches
  // the root it opens).
  for (const auto& pattern : plan.patterns)
    (void)guard.walk_to_parent(pattern.dir, pattern.dir / "-", false);
  for (const auto& where : plan.indexes) {
    GitIndexState state{where, std::nullopt};
    if (UniqueFd parent = guard.walk_to_parent(where.base, where.index, false)) {
      struct stat st {};
      if (::fstatat(parent.get(), "index", &st, AT_SYMLINK_NOFOLLOW) == 0) state.start = st;
    }
    guard.indexes_.push_back(std::move(state));
  }
  for (const auto& where : plan.configs) guard.guard_config(where);
  if (guard.tree_) guard.watch_start_trees();
  guard.starting_ = false;
  // (pid 1 only sweeps at the end.)
  if (watch == Watch::Yes && first == FirstCheck::AtStart) guard.first_check();
  // A configuration read without its content at the start would make the user's own keys look
  // added; a check not made leaves a name unchecked: fail closed.
  if (guard.opener_.failure) return std::unexpected(*guard.opener_.failure);
  return guard;
}

void Guard::first_check() {
  // Placeholders a killed strict sandbox left behind: removed when no sandbox holds them.
  for (const auto& path : plan_.leftover_placeholders)
    if (auto placeholder = adopt_if_placeholder(path)) remove_placeholder(*placeholder, Unmask::No);
  // A name made between the plan and the watch.
  walked_.emplace();
  check_all();
  walked_.reset();
}

void Guard::guard_config(const GuardedConfig& where) {
  if (std::ranges::any_of(configs_, [&](const Config& c) { return c.where.path == where.path; }))
    return;
  for (const auto& part : components(where.base, where.path)) relevant_names_.insert(part);
  Config config{where, std::nullopt, {}};
  if (UniqueFd parent = walk_to_parent(where.base, where.path, false)) {
    FileRead read = read_at(opener_, parent.get(), where.path.filename().string(), where.path);
    if (read.content && !read.too_large) {
      config.start_scan = policy::scan_git_config(*read.content, where.file);
      config.start = read.content;
      config.start_mode = read.mode;
      config.accepted = std::move(read.content);
    }
  }
  configs_.push_back(std::move(config));
}

int Guard::base_fd(const fs::path& base) {
  if (auto it = bases_.find(base); it != bases_.end()) return it->second.get();
  UniqueFd fd(
      opener_.open(AT_FDCWD, base.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, base));
  // Not kept when it failed for lack of descriptors: the next check tries again.
  if (!fd && out_of_resources(errno)) return -1;
  return bases_.emplace(base, std::move(fd)).first->second.get();
}

int Guard::watch(int dir_fd, const fs::path& path, const fs::path& base, std::uint32_t mask) {
  if (!inotify_ || !watching_) return -1;
  if (mask == 0) mask = kWatchMask;
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0) return -1;
  const std::pair key{st.st_dev, st.st_ino};
  // Through the descriptor's magic link: exactly the directory the walk holds.
  const std::string link = "/proc/self/fd/" + std::to_string(dir_fd);
  if (const auto known = watched_.find(key); known != watched_.end()) {
    const int wd = known->second;
    WatchedDir& dir = watch_dirs_[wd];
    // It may have moved: its events are named from where it is now.
    if (!base.empty()) {
      dir.path = path;
      dir.base = base;
    }
    if ((mask & ~dir.mask) != 0 &&
        ::inotify_add_watch(inotify_.get(), link.c_str(), mask | IN_MASK_ADD) >= 0)
      dir.mask |= mask;
    return wd;
  }
  const int wd = ::inotify_add_watch(inotify_.get(), link.c_str(), mask);
  if (wd < 0) {
    // A directory made during the command left unwatched: what is made below it is found by the
    // last sweep's walk instead.
    if (tree_ && !start_walk_) knowledge_lost_ = true;
    if (start_walk_) return -1;  // past the user's limit: as past the bound
    const int err = errno;
    // Out of watches (fs.inotify.max_user_watches): what lies below is checked after the
    // command only. Said once.
    if (!watch_failed_) {
      watch_failed_ = true;
      notices_.push_back(std::string("warning: the guard could not watch a directory (") +
                         core::errno_name(err) +
                         "): names created there were checked only after the command; raise "
                         "fs.inotify.max_user_watches or set filesystem.protection to \"strict\"");
    }
    return -1;
  }
  watched_[key] = wd;
  watch_inodes_[wd] = key;
  watch_dirs_[wd] = {path, base, mask};
  return wd;
}

UniqueFd Guard::walk_to_parent(const fs::path& base, const fs::path& path, bool) {
  const int root = base_fd(base);
  if (root < 0) return {};
  const auto parts = components(base, path);
  if (parts.empty()) return {};
  // `current` is `owned`'s descriptor, or one walked_ keeps. A kept directory is taken only while
  // its name in its parent is still that directory (the same device and inode).
  const auto kept = [this](const fs::path& dir, const struct stat* st) {
    if (!walked_) return -1;
    const auto it = walked_->find(dir);
    if (it == walked_->end()) return -1;
    if (st == nullptr ||
        (S_ISDIR(st->st_mode) && st->st_dev == it->second.dev && st->st_ino == it->second.ino))
      return it->second.fd.get();
    walked_->erase(it);
    return -1;
  };
  const auto keep = [this](const fs::path& dir, UniqueFd& owned, const struct stat& st) {
    const int fd = owned.get();
    if (walked_ && walked_->size() < kMaxWalked)
      walked_->emplace(dir, Walked{std::move(owned), st.st_dev, st.st_ino});
    return fd;
  };
  UniqueFd owned;
  int current = kept(base, nullptr);
  if (current < 0) {
    owned.reset(opener_.open(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, base));
    if (!owned) return {};
    watch(owned.get(), base, base);
    struct stat st {};
    current = ::fstat(owned.get(), &st) == 0 ? keep(base, owned, st) : owned.get();
  }
  fs::path at = base;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& part = parts[i];
    const fs::path next_path = at / part;
    struct stat st {};
    if (::fstatat(current, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
    if (const int fd = kept(next_path, &st); fd >= 0) {
      owned.reset();
      current = fd;
      at = next_path;
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      // The planner resolved every symlink of the path: this one was made since, and a host
      // program reaching the guarded name would follow it. Not moved while the guard starts
      // (before its first check, the plan may be stale: FirstCheck::Later): a later check does.
      if (!starting_)
        move_out(current, part, next_path,
                 "a symlink made on the way to the guarded " + path.string());
      return {};
    }
    if (!S_ISDIR(st.st_mode)) return {};
    UniqueFd next(opener_.open(current, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                               next_path));
    if (!next) return {};
    watch(next.get(), next_path, base);
    owned = std::move(next);
    current = keep(next_path, owned, st);
    at = next_path;
  }
  if (owned) return owned;
  UniqueFd copy(::fcntl(current, F_DUPFD_CLOEXEC, 0));
  // A name left unchecked for lack of descriptors fails closed, as an open(2) would.
  if (!copy && out_of_resources(errno))
    fail_closed(core::sys_error("fcntl(" + at.string() + ", F_DUPFD_CLOEXEC)", errno));
  return copy;
}

void Guard::move_out(int parent_fd, const std::string& name, const fs::path& original,
                     const std::string& why) {
  // The walks kept (walked_) go once this move is made, as a directory on their way may be
  // what moved; not before it, as `parent_fd` may be one of them.
  const std::unique_ptr<Guard, void (*)(Guard*)> forget_walks(
      this, [](Guard* guard) { guard->walked_.reset(); });
  auto moved = quarantine_move(quarantine_, parent_fd, name, original, why);
  if (moved) {
    notices_.push_back(describe_quarantined(*moved));
    return;
  }
  if (moved.error().code == ENOENT) return;
  // The quarantine cannot take it: made inert in place, never deleted. When the quarantine
  // refuses the item (quarantine_refused()) that is the rule; any other failure stops the
  // command (fail closed).
  const std::string cause = moved.error().describe();
  const bool refused = quarantine_refused(moved.error());
  auto defused = defuse_in_place(parent_fd, name);
  if (!defused && defused.error().code == ENOENT) return;  // another mover took it
  std::string line;
  if (defused) {
    line = "renamed " + original.string() + " to " + (original.parent_path() / *defused).string() +
           " (" + why + "); the quarantine " + (refused ? "did not take it: " : "failed: ") + cause;
  } else if (auto inert = make_inert(parent_fd, name, std::nullopt, 0, 0); inert) {
    line = "emptied " + original.string() + " in place (" + why +
           "); the quarantine failed: " + cause + "; the rename failed: " + defused.error().message;
  } else {
    line = "error: " + original.string() + " (" + why +
           ") could not be moved, renamed or emptied: " + cause + "; " + defused.error().message +
           "; remove it before a program on the host reads it";
  }
  if (!refused || !defused)
    fail_closed(core::Error{"could not quarantine " + original.string() + " (" + cause + ")"});
  notices_.push_back(std::move(line));
}

void Guard::fail_closed(core::Error error) {
  if (!opener_.failure) opener_.failure = std::move(error);
}

void Guard::check_name(const GuardedName& name) {
  UniqueFd parent = walk_to_parent(name.base, name.path, true);
  if (!parent) return;
  const std::string leaf = name.path.filename().string();
  struct stat st {};
  if (::fstatat(parent.get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (S_ISDIR(st.st_mode) && held_placeholder(parent.get(), name.path)) return;
  move_out(parent.get(), leaf, name.path, "a guarded name: " + name.why);
}

bool Guard::held_placeholder(int parent_fd, const fs::path& path) {
  const std::string leaf = path.filename().string();
  // An empty placeholder of a strict sandbox of the same workspace that still runs (a leftover
  // one was removed when the guard started). Watched first, so that anything made in it later
  // is seen; the mark alone proves nothing (a command can set it), emptiness does.
  UniqueFd dir(
      opener_.open(parent_fd, leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, path));
  if (!dir) return false;
  char value[8];
  if (::fgetxattr(dir.get(), kPlaceholderXattr, value, sizeof value) < 0) return false;
  if (const int wd = watch(dir.get()); wd >= 0) placeholder_watches_.insert(wd);
  const auto names = entry_names(dir.get());
  return names && names->empty();
}

void Guard::check_config(Config& config, bool final) {
  // A writer may replace the file while it is being undone: then it is read again (bounded).
  for (int round = 0; round < 8; ++round)
    if (check_config_once(config, final)) return;
}

bool Guard::check_config_once(Config& config, bool final) {
  UniqueFd parent = walk_to_parent(config.where.base, config.where.path, false);
  if (!parent) return true;
  const std::string leaf = config.where.path.filename().string();
  const FileRead read = read_at(opener_, parent.get(), leaf, config.where.path);
  const fs::path& path = config.where.path;
  if (!read.not_regular && !read.content) return true;  // removed: git reads nothing there
  if (!read.not_regular && read.content == config.accepted) return true;
  std::string reason;
  std::string attempted;
  // What goes back: the attempted version without what it added, so that the ordinary changes
  // made alongside stay; the last accepted content when the file cannot be read as git does.
  std::optional<std::string> restore = config.accepted;
  if (read.not_regular) {
    reason = "it was replaced by something that is not a file";
  } else if (read.too_large) {
    reason = "it grew past 4 MiB";
    attempted = *read.content;
  } else {
    attempted = *read.content;
    const policy::GitConfigScan scan = policy::scan_git_config(attempted, config.where.file);
    if (scan.malformed) {
      // git refuses to run on a malformed file; a half-written one is read again when the
      // writer is done. After the command it is undone.
      if (!final) return true;
      reason = "git cannot read it (" + scan.malformed_reason + ")";
    } else {
      // Compared with what the file held when the command started, not with the last accepted
      // version: a writer that truncates first (`cp`, `mv` across mounts) passes through an
      // empty file, which must not become the reference.
      const auto added = policy::added_not_allowed(config.start_scan, scan);
      if (added.empty()) {
        config.accepted = attempted;
        return true;
      }
      reason = "it set " + key_list(added) + ", which is not on the allowlist of " +
               (config.where.file == policy::GitConfigFile::Gitmodules
                    ? "keys git reads from .gitmodules"
                    : "keys that run nothing");
      restore = policy::without_findings(attempted, added, config.where.file);
      // Nothing but the offending entries changed since the last accepted version: that one
      // comes back exactly (no emptied section header left behind).
      // (The content at the start is preferred: an accepted version may be a writer's
      // intermediate state.)
      if (config.start && same_entries(*config.start, *restore))
        restore = config.start;
      else if (config.accepted && same_entries(*config.accepted, *restore))
        restore = config.accepted;
    }
  }
  // Only what was read is undone: a file replaced meanwhile is read again first.
  walked_.reset();
  std::string stored;
  std::optional<core::Error> undo_failed;
  if (read.not_regular) {
    auto moved =
        quarantine_move(quarantine_, parent.get(), leaf, path, "replaced " + path.string());
    if (moved) stored = moved->stored.string();
    if (restore) {
      if (auto put = replace_at(opener_, parent.get(), leaf, path, *restore, read.mode); !put)
        undo_failed = put.error();
    } else if (!moved && moved.error().code != ENOENT) {
      undo_failed = moved.error();
    }
  } else if (restore) {
    // The mode it had at the start: a writer's intermediate file may be 0600.
    const auto swap =
        exchange_if(opener_, parent.get(), leaf, path, *restore,
                    config.start ? config.start_mode : read.mode, read.dev, read.inode);
    if (swap && *swap == Swap::Changed) return false;
    if (swap)
      config.accepted = *restore;
    else
      undo_failed = swap.error();
  } else if (::unlinkat(parent.get(), leaf.c_str(), 0) != 0 && errno != ENOENT) {
    undo_failed = core::sys_error("unlink(" + path.string() + ")", errno);
  }
  std::string not_kept;
  if (!read.not_regular) {
    auto kept = quarantine_bytes(quarantine_, attempted, path, "a change to " + path.string());
    if (kept) stored = kept->stored.string();
    // Only the record is lost: the change itself is undone.
    if (!kept) not_kept = "; the attempted version could not be kept: " + kept.error().message;
  }
  std::string line = "undid a change to " + path.string() + ": " + reason;
  if (!undo_failed) {
    line += restore ? "; the file is back without it" : "; it is removed";
  } else {
    line += "; " + undo_in_place(config, parent.get(), {read.not_regular, read.dev, read.inode},
                                 restore, *undo_failed);
  }
  if (!stored.empty()) line += "; the attempted version is kept in the quarantine: " + stored;
  notices_.push_back(std::move(line) + not_kept);
  return true;
}

std::string Guard::undo_in_place(Config& config, int parent_fd, const ReadFile& read,
                                 const std::optional<std::string>& restore,
                                 const core::Error& cause) {
  const fs::path& path = config.where.path;
  const std::string leaf = path.filename().string();
  auto inert = read.not_regular
                   ? make_inert(parent_fd, leaf, std::nullopt, 0, 0)
                   : make_inert(parent_fd, leaf, restore.value_or(""), read.dev, read.inode);
  std::string done;
  if (!inert) {
    done = "it could not be put back (" + cause.message + ") nor made inert (" +
           inert.error().message + "): remove it before running git there";
  } else {
    done = "it could not be put back (" + cause.message + "), so " + *inert;
    // What the file holds now, the reference for the next change.
    if (inert->starts_with("it was rewritten"))
      config.accepted = restore;
    else if (inert->starts_with("it was emptied"))
      config.accepted = "";
    else
      config.accepted = std::nullopt;
  }
  fail_closed(core::Error{"could not undo a change to " + path.string() + ": " + done});
  return done;
}

void Guard::check_pattern(const GuardedPattern& pattern) {
  UniqueFd dir = walk_to_parent(pattern.dir, pattern.dir / "-", false);
  if (!dir) return;
  std::vector<std::string> names = entry_names(dir.get()).value_or(std::vector<std::string>{});
  std::erase_if(names, [&](const std::string& name) {
    return !policy::matches_name_pattern(pattern.pattern, name) ||
           std::ranges::find(pattern.existing, name) != pattern.existing.end();
  });
  std::ranges::sort(names);
  for (const auto& name : names)
    move_out(dir.get(), name, pattern.dir / name, "a guarded name: " + pattern.why);
}

bool Guard::relevant_name(const std::string& name) const {
  if (relevant_names_.contains(name)) return true;
  return std::ranges::any_of(plan_.patterns, [&](const GuardedPattern& pattern) {
    return policy::matches_name_pattern(pattern.pattern, name);
  });
}

void Guard::check_all() {
  for (const auto& name : plan_.names) check_name(name);
  for (const auto& pattern : plan_.patterns) check_pattern(pattern);
  for (auto& config : configs_) check_config(config, false);
}

void Guard::on_events() {
  if (!inotify_) return;
  if (drain_events()) check_all();
  inspect_pending(false);
}

bool Guard::drain_events() {
  if (!inotify_) return false;
  alignas(inotify_event) char buffer[16384];
  bool relevant = false;
  std::vector<std::pair<fs::path, fs::path>> new_dirs;
  for (;;) {
    const ssize_t n = ::read(inotify_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (char* at = buffer; at < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      at += sizeof(inotify_event) + event->len;
      if ((event->mask & IN_Q_OVERFLOW) != 0) {
        relevant = true;
        // Events were dropped: what they said is found by the last sweep's walk.
        if (tree_) knowledge_lost_ = true;
      }
      if ((event->mask & IN_IGNORED) != 0) {
        if (auto it = watch_inodes_.find(event->wd); it != watch_inodes_.end()) {
          watched_.erase(it->second);
          watch_inodes_.erase(it);
          placeholder_watches_.erase(event->wd);
        }
        watch_dirs_.erase(event->wd);
        continue;
      }
      if (event->len > 0 && relevant_name(event->name)) relevant = true;
      if (placeholder_watches_.contains(event->wd)) relevant = true;
      if (!tree_ || event->len == 0) continue;
      const auto dir = watch_dirs_.find(event->wd);
      if (dir == watch_dirs_.end() || dir->second.base.empty()) continue;
      const fs::path path = dir->second.path / event->name;
      note_changed(path, dir->second.base);
      if ((event->mask & IN_ISDIR) != 0 && (event->mask & (IN_CREATE | IN_MOVED_TO)) != 0)
        new_dirs.emplace_back(path, dir->second.base);
    }
  }
  for (const auto& [path, base] : new_dirs) watch_new_tree(path, base);
  return relevant;
}

std::string incomplete_sweep(const core::Error& failure) {
  return "warning: the guard's last sweep could not check or undo everything (" + failure.message +
         "); look for guarded names in the workspace before a program on the host reads them";
}

void Guard::final_sweep() {
  opener_.failure.reset();
  walked_.emplace();
  for (const auto& name : plan_.names) check_name(name);
  for (const auto& pattern : plan_.patterns) check_pattern(pattern);
  for (auto& config : configs_) check_config(config, true);
  walked_.reset();
  final_discovery();
}

std::vector<std::string> Guard::take_notices() {
  return std::exchange(notices_, {});
}

}  // namespace pisandbox::sandbox::linux_
