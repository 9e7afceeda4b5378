#include "sandbox/linux/guard.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>
#include <unordered_set>

#include "core/io.hpp"
#include "policy/git_index.hpp"
#include "policy/protected_scan.hpp"
#include "sandbox/linux/placeholders.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;

namespace {

/// Events that can make a guarded name or configuration appear or change.
constexpr std::uint32_t kWatchMask =
    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_ONLYDIR | IN_EXCL_UNLINK;
/// Events that say an entry of a directory below a writable root was made or changed (not
/// IN_MODIFY: every write(2) would be one; a file is inspected when it is closed).
constexpr std::uint32_t kTreeMask =
    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB | IN_ONLYDIR | IN_EXCL_UNLINK;

/// A git configuration larger than this is not read: it is undone as a whole.
constexpr std::size_t kMaxConfigBytes = std::size_t{4} << 20;
/// An index larger than this is not read for gitlinks (100 000 files make about 10 MiB).
constexpr std::size_t kMaxIndexBytes = std::size_t{256} << 20;

/// How often an open(2) of the guard is tried while it fails for lack of descriptors or memory,
/// and the pause between two tries: 100 ms in all, in which the proxy's thread (what usually
/// holds many descriptors) closes connections it is done with.
constexpr int kOpenTries = 6;
constexpr auto kOpenRetryPause = std::chrono::milliseconds(20);

/// Whether `err` says the process lacks descriptors or memory for now, not that the path is
/// missing or refused: the check that met it was not made.
bool out_of_resources(int err) {
  return err == EMFILE || err == ENFILE || err == ENOMEM;
}

const char* open_flags_text(int flags) {
  if ((flags & O_PATH) != 0) return "O_PATH";
  if ((flags & O_CREAT) != 0) return "O_WRONLY|O_CREAT";
  return "O_RDONLY";
}

}  // namespace

int GuardOpener::open(int dir, const char* name, int flags, const fs::path& shown, mode_t mode) {
  // Once a check has failed the command is being stopped: no more pauses.
  const int tries = failure ? 1 : kOpenTries;
  for (int attempt = 1;; ++attempt) {
    const int fd = ::openat(dir, name, flags, mode);
    if (fd >= 0) return fd;
    const int err = errno;
    if (!out_of_resources(err)) return -1;
    if (attempt == tries) {
      if (!failure)
        failure = core::sys_error(
            "openat(" + shown.string() + ", " + open_flags_text(flags) + ")", err,
            "hint: pi-sandbox ran out of descriptors or memory (ulimit -n, fs.file-max); the "
            "guard fails closed rather than leave a guarded name unchecked");
      errno = err;
      return -1;
    }
    std::this_thread::sleep_for(kOpenRetryPause);
  }
}

namespace {

std::vector<std::string> components(const fs::path& base, const fs::path& path) {
  std::vector<std::string> parts;
  for (const auto& part : path.lexically_relative(base))
    if (!part.empty() && part != ".") parts.push_back(part.string());
  return parts;
}

/// The content of the regular file `name` in `dir`; nullopt when it is missing; `symlink` set
/// when a symlink (or anything but a regular file) stands there; `too_large` past the bound.
struct FileRead {
  std::optional<std::string> content;
  bool not_regular = false;
  bool too_large = false;
  mode_t mode = 0644;
  dev_t dev = 0;
  ino_t inode = 0;
};

/// `shown`: the path for a message, when the open fails for lack of descriptors (GuardOpener).
FileRead read_at(GuardOpener& opener, int dir, const std::string& name, const fs::path& shown,
                 std::size_t max_bytes = kMaxConfigBytes) {
  FileRead read;
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return read;
  read.dev = st.st_dev;
  read.inode = st.st_ino;
  if (!S_ISREG(st.st_mode)) {
    read.not_regular = true;
    return read;
  }
  UniqueFd fd(
      opener.open(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, shown));
  if (!fd) {
    if (errno == ELOOP || errno == ENXIO) read.not_regular = true;
    return read;
  }
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    read.not_regular = true;
    return read;
  }
  read.dev = st.st_dev;
  read.inode = st.st_ino;
  read.mode = st.st_mode & 0666;
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      read.too_large = true;
      break;
    }
  }
  read.content = std::move(text);
  return read;
}

/// Writes `bytes` to a new file `.pi-sandbox-restore-<hex>` in `dir` (`shown`: the path it
/// replaces, for a message); returns its name. Errors name the call and errno (a full disk:
/// `write(".../.pi-sandbox-restore-1a2b3c4d"): ENOSPC`); nothing is left behind then.
core::Result<std::string> write_new(GuardOpener& opener, int dir, const fs::path& shown,
                                    const std::string& bytes, mode_t mode) {
  std::uint32_t salt = 0;
  (void)::getrandom(&salt, sizeof salt, 0);
  char temp[64];
  std::snprintf(temp, sizeof temp, ".pi-sandbox-restore-%08x", salt);
  const fs::path temp_path = shown.parent_path() / temp;
  UniqueFd fd(opener.open(dir, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          temp_path, mode));
  if (!fd)
    return std::unexpected(
        core::sys_error("openat(" + temp_path.string() + ", O_WRONLY|O_CREAT)", errno));
  const bool written = core::write_all(fd.get(), bytes);
  const int err = errno;
  fd.reset();
  if (!written) {
    (void)::unlinkat(dir, temp, 0);
    return std::unexpected(core::sys_error("write(" + temp_path.string() + ")", err));
  }
  return std::string(temp);
}

/// Replaces `name` in `dir` (`shown`, for a message) with `bytes` atomically (a new file renamed
/// over it). Errors: write_new()'s, or the rename(2)'s.
core::Result<void> replace_at(GuardOpener& opener, int dir, const std::string& name,
                              const fs::path& shown, const std::string& bytes, mode_t mode) {
  auto temp = write_new(opener, dir, shown, bytes, mode);
  if (!temp) return std::unexpected(temp.error());
  if (::renameat(dir, temp->c_str(), dir, name.c_str()) != 0) {
    const int err = errno;
    (void)::unlinkat(dir, temp->c_str(), 0);
    return std::unexpected(core::sys_error("rename(" + shown.string() + ")", err));
  }
  return {};
}

/// The outcome of exchange_if() that is not a failure.
enum class Swap { Done, Changed };

/// Puts `bytes` at `name` in `dir` only if the file there is still (`dev`, `ino`): a new file
/// is exchanged with it atomically (renameat2 RENAME_EXCHANGE), and when what came out is not
/// that file (a writer replaced it meanwhile), the exchange is undone: Changed, and the caller
/// reads again. Never loses the newer file to a restore of an older one. Errors: write_new()'s,
/// or the rename(2)'s.
core::Result<Swap> exchange_if(GuardOpener& opener, int dir, const std::string& name,
                               const fs::path& shown, const std::string& bytes, mode_t mode,
                               dev_t dev, ino_t ino) {
  auto made = write_new(opener, dir, shown, bytes, mode);
  if (!made) return std::unexpected(made.error());
  const char* temp = made->c_str();
  if (::renameat2(dir, temp, dir, name.c_str(), RENAME_EXCHANGE) != 0) {
    // Gone meanwhile: nothing newer to keep.
    int err = errno;
    if (err == ENOENT && ::renameat(dir, temp, dir, name.c_str()) == 0) return Swap::Done;
    if (err == ENOENT) err = errno;
    (void)::unlinkat(dir, temp, 0);
    return std::unexpected(core::sys_error("rename(" + shown.string() + ", RENAME_EXCHANGE)", err));
  }
  struct stat out {};
  if (::fstatat(dir, temp, &out, AT_SYMLINK_NOFOLLOW) == 0 && out.st_dev == dev &&
      out.st_ino == ino) {
    (void)::unlinkat(dir, temp, 0);
    return Swap::Done;
  }
  // Someone else's newer file came out: it goes back, ours is dropped.
  (void)::renameat2(dir, temp, dir, name.c_str(), RENAME_EXCHANGE);
  (void)::unlinkat(dir, temp, 0);
  return Swap::Changed;
}

/// Makes the file `name` of `dir` inert when it could not be replaced by a new file (a full
/// disk, no descriptors), in ways that need no new space, in this order:
///   - rewritten in place to `content` through its own descriptor (pwrite(2), ftruncate(2)),
///     when `content` fits in the blocks the file holds (st_blocks) and it is still the file
///     read (`dev`, `ino`; 0: any regular file);
///   - truncated to zero length (git reads an empty configuration as no keys at all);
///   - renamed in place (defuse_in_place()), for what is not a regular file or cannot be opened;
///     nothing to do when nothing is there any more.
/// Returns what was done, for the line (`it was rewritten in place without it`), or the error
/// of the last way tried when none worked.
core::Result<std::string> make_inert(int dir, const std::string& name,
                                     const std::optional<std::string>& content, dev_t dev,
                                     ino_t ino) {
  UniqueFd fd(::openat(dir, name.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  const bool same = fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
                    (ino == 0 || (st.st_dev == dev && st.st_ino == ino));
  if (same) {
    if (content && content->size() <= static_cast<std::size_t>(st.st_blocks) * 512) {
      std::size_t done = 0;
      while (done < content->size()) {
        const ssize_t n = ::pwrite(fd.get(), content->data() + done, content->size() - done,
                                   static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      if (done == content->size() && ::ftruncate(fd.get(), static_cast<off_t>(done)) == 0)
        return std::string(content->empty() ? "it was emptied in place"
                                            : "it was rewritten in place without it");
    }
    if (::ftruncate(fd.get(), 0) == 0) return std::string("it was emptied in place");
  }
  fd.reset();
  auto defused = defuse_in_place(dir, name);
  // Nothing there any more (moved to the quarantine first): git reads no file.
  if (!defused && defused.error().code == ENOENT) return std::string("it is left absent");
  if (!defused) return std::unexpected(defused.error());
  return "it was renamed to " + *defused;
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

std::string key_list(const std::vector<policy::GitConfigFinding>& findings) {
  std::vector<std::string> keys;
  for (const auto& f : findings)
    if (std::ranges::find(keys, f.key) == keys.end()) keys.push_back(f.key);
  std::string text;
  for (const auto& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text;
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

core::Result<Guard> Guard::start(const GuardPlan& plan, Quarantine quarantine, Watch watch) {
  Guard guard(plan, std::move(quarantine));
  (void)::clock_gettime(CLOCK_REALTIME_COARSE, &guard.start_time_);
  guard.tree_ = watch == Watch::Yes && !plan.writable_roots.empty();
  if (watch == Watch::Yes &&
      (!plan.names.empty() || !plan.configs.empty() || !plan.patterns.empty() ||
       !plan.writable_roots.empty())) {
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
  if (watch == Watch::Yes) {
    // Placeholders a killed strict sandbox left behind: removed when no sandbox holds them.
    for (const auto& path : plan.leftover_placeholders)
      if (auto placeholder = adopt_if_placeholder(path))
        remove_placeholder(*placeholder, Unmask::No);
    // The supervisor's first check: a name made between the plan and the watch. (pid 1 only
    // sweeps at the end.)
    guard.check_all();
  }
  // A configuration read without its content at the start would make the user's own keys look
  // added; a check not made leaves a name unchecked: fail closed.
  if (guard.opener_.failure) return std::unexpected(*guard.opener_.failure);
  return guard;
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
  UniqueFd current(opener_.open(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, base));
  if (!current) return {};
  watch(current.get(), base, base);
  const auto parts = components(base, path);
  if (parts.empty()) return {};
  fs::path at = base;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& part = parts[i];
    struct stat st {};
    if (::fstatat(current.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return {};
    if (S_ISLNK(st.st_mode)) {
      // The planner resolved every symlink of the path: this one was made since, and a host
      // program reaching the guarded name would follow it.
      move_out(current.get(), part, at / part,
               "a symlink made on the way to the guarded " + path.string());
      return {};
    }
    if (!S_ISDIR(st.st_mode)) return {};
    UniqueFd next(opener_.open(current.get(), part.c_str(),
                               O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, at / part));
    if (!next) return {};
    watch(next.get(), at / part, base);
    current = std::move(next);
    at /= part;
  }
  return current;
}

void Guard::move_out(int parent_fd, const std::string& name, const fs::path& original,
                     const std::string& why) {
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

std::string incomplete_sweep(const core::Error& failure) {
  return "warning: the guard's last sweep could not check or undo everything (" + failure.message +
         "); look for guarded names in the workspace before a program on the host reads them";
}

void Guard::final_sweep() {
  opener_.failure.reset();
  for (const auto& name : plan_.names) check_name(name);
  for (const auto& pattern : plan_.patterns) check_pattern(pattern);
  for (auto& config : configs_) check_config(config, true);
  final_discovery();
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

std::vector<std::string> Guard::take_notices() {
  return std::exchange(notices_, {});
}

}  // namespace pisandbox::sandbox::linux_
