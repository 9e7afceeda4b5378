#include "sandbox/linux/guard.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/io.hpp"
#include "policy/git_index.hpp"
#include "policy/protected_scan.hpp"
#include "sandbox/linux/placeholders.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;

namespace {

/// Events that can make a guarded name or configuration appear or change.
constexpr std::uint32_t kWatchMask =
    IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY | IN_ONLYDIR | IN_EXCL_UNLINK;

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
  // Each watch removed now: the kernel frees its mark after an SRCU grace period (10-20 ms on
  // a loaded 2-CPU machine), in the background, while pid 1 kills, sweeps and exits; the last
  // close of the instance then waits only for what is left of it.
  for (const auto& [wd, inode] : watch_inodes_) (void)::inotify_rm_watch(inotify_.get(), wd);
  watch_inodes_.clear();
  watched_.clear();
  placeholder_watches_.clear();
  watching_ = false;
}

core::Result<Guard> Guard::start(const GuardPlan& plan, Quarantine quarantine, Watch watch) {
  Guard guard(plan, std::move(quarantine));
  if (watch == Watch::Yes &&
      (!plan.names.empty() || !plan.configs.empty() || !plan.patterns.empty())) {
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
  for (const auto& where : plan.configs) {
    for (const auto& part : components(where.base, where.path)) guard.relevant_names_.insert(part);
    Config config{where, std::nullopt, {}};
    if (UniqueFd parent = guard.walk_to_parent(where.base, where.path, false)) {
      FileRead read =
          read_at(guard.opener_, parent.get(), where.path.filename().string(), where.path);
      if (read.content && !read.too_large) {
        config.start_scan = policy::scan_git_config(*read.content, where.file);
        config.start = read.content;
        config.start_mode = read.mode;
        config.accepted = std::move(read.content);
      }
    }
    guard.configs_.push_back(std::move(config));
  }
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

int Guard::base_fd(const fs::path& base) {
  if (auto it = bases_.find(base); it != bases_.end()) return it->second.get();
  UniqueFd fd(
      opener_.open(AT_FDCWD, base.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, base));
  // Not kept when it failed for lack of descriptors: the next check tries again.
  if (!fd && out_of_resources(errno)) return -1;
  return bases_.emplace(base, std::move(fd)).first->second.get();
}

int Guard::watch(int dir_fd) {
  if (!inotify_ || !watching_) return -1;
  struct stat st {};
  if (::fstat(dir_fd, &st) != 0) return -1;
  const std::pair key{st.st_dev, st.st_ino};
  if (watched_.contains(key)) {
    for (const auto& [wd, inode] : watch_inodes_)
      if (inode == key) return wd;
    return -1;
  }
  // Through the descriptor's magic link: exactly the directory the walk holds.
  const std::string link = "/proc/self/fd/" + std::to_string(dir_fd);
  const int wd = ::inotify_add_watch(inotify_.get(), link.c_str(), kWatchMask);
  if (wd < 0) {
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
  watched_.insert(key);
  watch_inodes_[wd] = key;
  return wd;
}

UniqueFd Guard::walk_to_parent(const fs::path& base, const fs::path& path, bool) {
  const int root = base_fd(base);
  if (root < 0) return {};
  UniqueFd current(opener_.open(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC, base));
  if (!current) return {};
  watch(current.get());
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
    watch(next.get());
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
  alignas(inotify_event) char buffer[16384];
  bool relevant = false;
  for (;;) {
    const ssize_t n = ::read(inotify_.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (char* at = buffer; at < buffer + n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(at);
      at += sizeof(inotify_event) + event->len;
      if ((event->mask & IN_Q_OVERFLOW) != 0) relevant = true;
      if ((event->mask & IN_IGNORED) != 0) {
        if (auto it = watch_inodes_.find(event->wd); it != watch_inodes_.end()) {
          watched_.erase(it->second);
          watch_inodes_.erase(it);
          placeholder_watches_.erase(event->wd);
        }
        continue;
      }
      if (event->len > 0 && relevant_name(event->name)) relevant = true;
      if (placeholder_watches_.contains(event->wd)) relevant = true;
    }
  }
  if (relevant) check_all();
}

void Guard::sanitize_repository(const fs::path& git_dir, const fs::path& base,
                                const std::string& origin) {
  if (std::ranges::find(sanitized_, git_dir) != sanitized_.end()) return;
  sanitized_.push_back(git_dir);
  // Its hooks and configuration were never guarded live.
  if (UniqueFd hooks_parent = walk_to_parent(base, git_dir / "hooks" / "x", false)) {
    std::vector<std::string> hooks =
        entry_names(hooks_parent.get()).value_or(std::vector<std::string>{});
    std::erase_if(hooks, [](const std::string& name) { return name.ends_with(".sample"); });
    std::ranges::sort(hooks);
    for (const auto& hook : hooks)
      move_out(hooks_parent.get(), hook, git_dir / "hooks" / hook,
               "a Git hook in " + origin + ": git on the host would run it");
  }
  for (const char* leaf : {"config", "config.worktree"}) {
    Config config{{git_dir / leaf, base}, std::nullopt, {}};
    UniqueFd parent = walk_to_parent(base, config.where.path, false);
    if (!parent) continue;
    const FileRead read = read_at(opener_, parent.get(), leaf, config.where.path);
    if (!read.content || read.not_regular) {
      if (read.not_regular) check_config(config, true);
      continue;
    }
    const auto scan = policy::scan_git_config(*read.content);
    if (!scan.malformed && scan.findings.empty()) continue;
    // No previous content to put back: the configuration without the offending entries.
    const std::string cleaned = policy::without_findings(*read.content, scan.findings);
    auto kept = quarantine_bytes(quarantine_, *read.content, config.where.path,
                                 "a change to " + config.where.path.string());
    const auto replaced =
        replace_at(opener_, parent.get(), leaf, config.where.path, cleaned, read.mode);
    std::string line =
        "cleaned " + config.where.path.string() + " in " + origin + ": " +
        (scan.malformed ? "git cannot read it (" + scan.malformed_reason + ")"
                        : "it set " + key_list(scan.findings) +
                              ", which is not on the allowlist of keys that run nothing");
    if (!replaced)
      line += "; " + undo_in_place(config, parent.get(), {read.not_regular, read.dev, read.inode},
                                   cleaned, replaced.error());
    if (kept) line += "; the original is kept in the quarantine: " + kept->stored.string();
    notices_.push_back(std::move(line));
  }
}

void Guard::check_new_repositories() {
  if (plan_.workspace.empty()) return;
  const auto scan = policy::scan_workspace(plan_.workspace, policy::ScanOptions{});
  for (const auto& p : scan.protected_paths) {
    if (p.reason != policy::ProtectReason::GitHooks) continue;
    const fs::path git_dir = p.path.parent_path();
    if (std::ranges::find(plan_.known_git_dirs, git_dir) != plan_.known_git_dirs.end()) continue;
    sanitize_repository(git_dir, plan_.workspace, "a repository the command created");
    // Its index too, for the gitlinks it registered (read by check_gitlinks()).
    indexes_.push_back({{git_dir / "index", git_dir.parent_path(), plan_.workspace}, std::nullopt});
  }
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
      const fs::path git_base = writable_root_of(git_dir);
      if (git_base.empty()) continue;  // a repository the command could not have written
      sanitize_repository(
          git_dir, git_base,
          "the repository " + dir.string() + " the command registered as a gitlink");
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
  check_new_repositories();
  check_gitlinks();
}

std::vector<std::string> Guard::take_notices() {
  return std::exchange(notices_, {});
}

}  // namespace pisandbox::sandbox::linux_
