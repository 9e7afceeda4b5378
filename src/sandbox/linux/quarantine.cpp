#include "sandbox/linux/quarantine.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/io.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;
using core::UniqueFd;

namespace {

std::unexpected<core::Error> fail_sys(std::string call, int err) {
  return std::unexpected(core::sys_error(std::move(call), err));
}

constexpr const char* kRecord = "record.json";
/// Directory levels a copy across mounts follows; deeper trees are refused (and the
/// original stays where it is for the next sweep to try again).
constexpr int kMaxCopyDepth = 64;

/// What one copy may still take (kMaxCopyDataBytes, kMaxCopyEntries): a copy across file
/// systems must not cost the quarantine's file system more than the item costs the workspace's,
/// nor stall the guard while it runs.
struct CopyBudget {
  std::uint64_t data_bytes;
  std::uint64_t entries;
};

constexpr CopyBudget kUnbounded{UINT64_MAX, UINT64_MAX};

core::Error over_budget(const std::string& what) {
  return core::Error{
      "the quarantine takes at most " + what + " per item copied across file systems", {}, EFBIG};
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

std::string random_hex() {
  std::uint32_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != sizeof value)
    value = static_cast<std::uint32_t>(::getpid()) ^ static_cast<std::uint32_t>(std::time(nullptr));
  char text[9];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

/// Makes a new, empty entry directory; returns its id and descriptor.
core::Result<std::pair<std::string, UniqueFd>> make_entry(const Quarantine& q) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string id = utc_now("%Y%m%dT%H%M%SZ") + "-" + random_hex();
    if (::mkdirat(q.root.get(), id.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      return fail_sys("mkdirat(\"" + (q.path / id).string() + "\")", errno);
    }
    UniqueFd fd(
        ::openat(q.root.get(), id.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return fail_sys("open(\"" + (q.path / id).string() + "\")", errno);
    return std::pair{std::move(id), std::move(fd)};
  }
  return core::fail("cannot make a quarantine entry in " + q.path.string());
}

bool write_file_at(int dir, const char* name, std::string_view bytes, mode_t mode) {
  UniqueFd fd(::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  return fd && core::write_all(fd.get(), bytes);
}

void write_record(int entry_fd, const QuarantineEntry& entry, const std::string& name,
                  int parent_fd) {
  nlohmann::json record = {{"original", entry.original.string()},
                           {"why", entry.why},
                           {"time", entry.time},
                           {"name", name}};
  // The directory it came from, so that a restore never follows a symlink put in its place.
  struct stat st {};
  if (parent_fd >= 0 && ::fstat(parent_fd, &st) == 0) {
    record["parent_dev"] = static_cast<std::uint64_t>(st.st_dev);
    record["parent_ino"] = static_cast<std::uint64_t>(st.st_ino);
  }
  (void)write_file_at(entry_fd, kRecord, record.dump(2) + "\n", 0600);
}

void remove_node(int dir, const std::string& name, int depth);

/// Removes every entry of the directory `fd` (never following a symlink).
void remove_children(int fd, int depth) {
  if (const auto names = entry_names(fd))
    for (const auto& n : *names) remove_node(fd, n, depth + 1);
}

void remove_node(int dir, const std::string& name, int depth) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
  if (S_ISDIR(st.st_mode) && depth < kMaxCopyDepth * 2) {
    UniqueFd sub(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (sub) remove_children(sub.get(), depth);
    (void)::unlinkat(dir, name.c_str(), AT_REMOVEDIR);
    return;
  }
  (void)::unlinkat(dir, name.c_str(), 0);
}

/// Copies the bytes of `in` to `out` (both regular files), data extents only (lseek(2)
/// SEEK_DATA/SEEK_HOLE; a file system without them reports the whole file as data): a sparse
/// file stays sparse. Each byte of data is taken from `budget`.
core::Result<void> copy_data(int in, int out, const std::string& name, CopyBudget& budget) {
  char buffer[65536];
  off_t at = 0;
  for (;;) {
    const off_t data = ::lseek(in, at, SEEK_DATA);
    if (data < 0 && errno == ENXIO) break;  // no data past `at`: the rest is a hole
    if (data < 0) return fail_sys("lseek(\"" + name + "\", SEEK_DATA)", errno);
    const off_t hole = ::lseek(in, data, SEEK_HOLE);
    if (hole < 0) return fail_sys("lseek(\"" + name + "\", SEEK_HOLE)", errno);
    for (at = data; at < hole;) {
      const auto want = static_cast<std::size_t>(std::min<off_t>(hole - at, sizeof buffer));
      const ssize_t n = ::pread(in, buffer, want, at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail_sys("read(\"" + name + "\")", errno);
      if (n == 0) break;  // truncated meanwhile
      if (static_cast<std::uint64_t>(n) > budget.data_bytes)
        return std::unexpected(
            over_budget(std::to_string(kMaxCopyDataBytes >> 20) + " MiB of data"));
      budget.data_bytes -= static_cast<std::uint64_t>(n);
      for (ssize_t done = 0; done < n;) {
        const ssize_t w =
            ::pwrite(out, buffer + done, static_cast<std::size_t>(n - done), at + done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return fail_sys("write(\"" + name + "\")", w < 0 ? errno : EIO);
        done += w;
      }
      at += n;
    }
    if (at < hole) break;
  }
  // The holes at the end: the size without blocks.
  struct stat st {};
  if (::fstat(in, &st) == 0 && ::ftruncate(out, st.st_size) != 0)
    return fail_sys("ftruncate(\"" + name + "\")", errno);
  return {};
}

/// Copies `name` of `from` into `to` under the same name, never following a symlink, taking
/// what it copies from `budget`.
core::Result<void> copy_node(int from, const std::string& name, int to, int depth,
                             CopyBudget& budget) {
  struct stat st {};
  if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return fail_sys("fstatat(\"" + name + "\")", errno);
  if (budget.entries == 0)
    return std::unexpected(over_budget(std::to_string(kMaxCopyEntries) + " entries"));
  --budget.entries;
  if (S_ISLNK(st.st_mode)) {
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlinkat(from, name.c_str(), target.data(), target.size());
    if (n < 0) return fail_sys("readlinkat(\"" + name + "\")", errno);
    target.resize(static_cast<std::size_t>(n));
    if (::symlinkat(target.c_str(), to, name.c_str()) != 0)
      return fail_sys("symlinkat(\"" + name + "\")", errno);
    return {};
  }
  if (S_ISREG(st.st_mode)) {
    // What the file holds on its disk: a dense file past the budget is refused before a byte is
    // copied (st_blocks counts 512-byte units, stat(2)).
    if (static_cast<std::uint64_t>(st.st_blocks) * 512 > budget.data_bytes + 65536)
      return std::unexpected(over_budget(std::to_string(kMaxCopyDataBytes >> 20) + " MiB of data"));
    UniqueFd in(::openat(from, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!in) return fail_sys("open(\"" + name + "\")", errno);
    UniqueFd out(::openat(to, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                          st.st_mode & 0700));
    if (!out) return fail_sys("open(\"" + name + "\")", errno);
    return copy_data(in.get(), out.get(), name, budget);
  }
  if (!S_ISDIR(st.st_mode)) return {};  // a fifo or socket: not kept, removed with the rest
  if (depth >= kMaxCopyDepth) return core::fail("\"" + name + "\": too deep to copy");
  UniqueFd source(::openat(from, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!source) return fail_sys("open(\"" + name + "\")", errno);
  if (::mkdirat(to, name.c_str(), 0700) != 0) return fail_sys("mkdirat(\"" + name + "\")", errno);
  UniqueFd target(::openat(to, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!target) return fail_sys("open(\"" + name + "\")", errno);
  const auto names = entry_names(source.get());
  if (!names) return fail_sys("opendir(\"" + name + "\")", errno);
  for (const auto& n : *names)
    if (auto r = copy_node(source.get(), n, target.get(), depth + 1, budget); !r) return r;
  return {};
}

std::optional<QuarantineEntry> read_entry(const fs::path& root, const std::string& id) {
  QuarantineEntry entry;
  entry.id = id;
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(root / id, ec))) return std::nullopt;
  FILE* file = std::fopen((root / id / kRecord).c_str(), "re");
  std::string text;
  if (file != nullptr) {
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0 && text.size() < 65536)
      text.append(buffer, n);
    std::fclose(file);
  }
  const auto record = nlohmann::json::parse(text, nullptr, false);
  if (record.is_object()) {
    entry.original = record.value("original", "");
    entry.why = record.value("why", "");
    entry.time = record.value("time", "");
    entry.parent_dev = record.value("parent_dev", std::uint64_t{0});
    entry.parent_ino = record.value("parent_ino", std::uint64_t{0});
    const std::string name = record.value("name", "");
    if (!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..")
      entry.stored = root / id / name;
  }
  return entry;
}

}  // namespace

fs::path default_quarantine_root(const fs::path& home) {
  if (home.empty() || home == "/")
    return "/var/tmp/pi-sandbox-quarantine-" + std::to_string(::geteuid());
  return home / ".local" / "state" / "pi-sandbox" / "quarantine";
}

namespace {

core::Result<void> check_owner(int fd, const fs::path& root) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail_sys("fstat(\"" + root.string() + "\")", errno);
  if (!S_ISDIR(st.st_mode))
    return core::fail("the quarantine " + root.string() + " is not a directory");
  if (st.st_uid != ::geteuid())
    return core::fail("the quarantine " + root.string() + " belongs to uid " +
                          std::to_string(st.st_uid) + ", not to this user",
                      "hint: remove it or set HOME to a home of your own");
  return {};
}

}  // namespace

core::Result<Quarantine> open_quarantine(const fs::path& root) {
  if (!root.is_absolute())
    return core::fail("the quarantine must be an absolute path: " + root.string());
  Quarantine q{UniqueFd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)), root};
  if (q.root) {
    if (auto owned = check_owner(q.root.get(), root); !owned) return std::unexpected(owned.error());
    return q;
  }
  // The deepest existing ancestor: what is below it is made on first use.
  fs::path at = root;
  while (at.has_relative_path()) {
    q.missing.insert(q.missing.begin(), at.filename().string());
    at = at.parent_path();
    q.anchor.reset(::open(at.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (q.anchor) return q;
  }
  return fail_sys("open(\"" + root.string() + "\")", ENOENT);
}

core::Result<void> ensure_quarantine_root(Quarantine& q) {
  if (q.root) return {};
  if (!q.anchor) return core::fail("the quarantine " + q.path.string() + " cannot be reached");
  UniqueFd current(::openat(q.anchor.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  fs::path made = q.path;
  for (std::size_t i = q.missing.size(); i > 0; --i) made = made.parent_path();
  for (const auto& part : q.missing) {
    made /= part;
    if (::mkdirat(current.get(), part.c_str(), 0700) != 0 && errno != EEXIST)
      return fail_sys("mkdirat(\"" + made.string() + "\")", errno);
    UniqueFd next(
        ::openat(current.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return fail_sys("open(\"" + made.string() + "\")", errno);
    current = std::move(next);
  }
  if (auto owned = check_owner(current.get(), q.path); !owned)
    return std::unexpected(owned.error());
  q.root = std::move(current);
  return {};
}

int quarantine_descriptor(const Quarantine& q) {
  return q.root ? q.root.get() : q.anchor.get();
}

namespace {

/// Moves `name` of `parent_fd` into `entry_fd` on another mount (pid 1's view of the
/// workspace, or a workspace on another file system than the quarantine): first claims the
/// item by renaming it within its own directory, so that a concurrent mover (the supervisor's
/// guard) and this one never both report it; then copies it within the budget and removes the
/// claimed original. A copy that fails (the budget, a full disk) leaves the item back at
/// `name` (or, when the command made `name` again meanwhile, at the claimed name, which no host
/// program reads), for the caller to defuse.
core::Result<void> copy_across(int parent_fd, const std::string& name, int entry_fd) {
  const std::string claimed = ".pi-sandbox-claimed-" + random_hex();
  if (::renameat2(parent_fd, name.c_str(), parent_fd, claimed.c_str(), RENAME_NOREPLACE) != 0)
    return fail_sys("rename(\"" + name + "\", \"" + claimed + "\")", errno);
  CopyBudget budget{kMaxCopyDataBytes, kMaxCopyEntries};
  if (auto copied = copy_node(parent_fd, claimed, entry_fd, 0, budget); !copied) {
    remove_node(entry_fd, claimed, 0);
    (void)::renameat2(parent_fd, claimed.c_str(), parent_fd, name.c_str(), RENAME_NOREPLACE);
    return copied;
  }
  remove_node(parent_fd, claimed, 0);
  if (::renameat(entry_fd, claimed.c_str(), entry_fd, name.c_str()) != 0)
    return fail_sys("rename(\"" + claimed + "\", \"" + name + "\")", errno);
  return {};
}

}  // namespace

core::Result<QuarantineEntry> quarantine_move(Quarantine& q, int parent_fd, const std::string& name,
                                              const fs::path& original, std::string_view why) {
  if (auto ready = ensure_quarantine_root(q); !ready) return std::unexpected(ready.error());
  auto made = make_entry(q);
  if (!made) return std::unexpected(made.error());
  auto& [id, entry_fd] = *made;
  QuarantineEntry entry{id, original, std::string(why), utc_now("%Y-%m-%dT%H:%M:%SZ"),
                        q.path / id / name};
  if (::renameat2(parent_fd, name.c_str(), entry_fd.get(), name.c_str(), RENAME_NOREPLACE) != 0) {
    const int err = errno;
    std::optional<core::Error> failed;
    if (err != EXDEV)
      failed = core::sys_error("rename(\"" + original.string() + "\" -> quarantine)", err);
    else if (auto copied = copy_across(parent_fd, name, entry_fd.get()); !copied)
      failed = copied.error();
    if (failed) {
      remove_children(entry_fd.get(), 0);
      (void)::unlinkat(q.root.get(), id.c_str(), AT_REMOVEDIR);
      return std::unexpected(*failed);
    }
  }
  write_record(entry_fd.get(), entry, name, parent_fd);
  return entry;
}

bool quarantine_refused(const core::Error& error) {
  return error.code == EFBIG || error.code == EACCES || error.code == EPERM;
}

core::Result<std::string> defuse_in_place(int parent_fd, const std::string& name) {
  const std::string defused = name + ".pi-sandbox-defused-" + random_hex();
  if (::renameat2(parent_fd, name.c_str(), parent_fd, defused.c_str(), RENAME_NOREPLACE) != 0)
    return fail_sys("rename(\"" + name + "\", \"" + defused + "\")", errno);
  return defused;
}

core::Result<QuarantineEntry> quarantine_bytes(Quarantine& q, std::string_view bytes,
                                               const fs::path& original, std::string_view why) {
  if (auto ready = ensure_quarantine_root(q); !ready) return std::unexpected(ready.error());
  auto made = make_entry(q);
  if (!made) return std::unexpected(made.error());
  auto& [id, entry_fd] = *made;
  const std::string name = original.filename().string();
  QuarantineEntry entry{id, original, std::string(why), utc_now("%Y-%m-%dT%H:%M:%SZ"),
                        q.path / id / name};
  if (!write_file_at(entry_fd.get(), name.c_str(), bytes, 0600)) {
    const int err = errno;
    remove_children(entry_fd.get(), 0);
    (void)::unlinkat(q.root.get(), id.c_str(), AT_REMOVEDIR);
    return fail_sys("write(\"" + entry.stored.string() + "\")", err);
  }
  write_record(entry_fd.get(), entry, name, -1);
  return entry;
}

std::vector<QuarantineEntry> list_quarantine(const fs::path& root) {
  std::vector<QuarantineEntry> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string id = e.path().filename().string();
    if (auto entry = read_entry(root, id)) entries.push_back(std::move(*entry));
  }
  std::ranges::sort(entries, {}, &QuarantineEntry::id);
  return entries;
}

core::Result<QuarantineEntry> restore_quarantined(const fs::path& root, std::string_view id) {
  const std::string name(id);
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    return core::fail("no quarantine entry " + name,
                      "hint: `pi-sandbox quarantine list` shows the entries");
  auto entry = read_entry(root, name);
  if (!entry)
    return core::fail("no quarantine entry " + name + " in " + root.string(),
                      "hint: `pi-sandbox quarantine list` shows the entries");
  if (entry->original.empty() || !entry->original.is_absolute() || entry->stored.empty())
    return core::fail("the quarantine entry " + name +
                      " has no readable record.json; its content is in " + (root / name).string());
  std::error_code ec;
  if (fs::exists(fs::symlink_status(entry->original, ec)))
    return core::fail(
        entry->original.string() + " exists; nothing was restored",
        "hint: move it away first, or copy what you need from " + entry->stored.string());
  const fs::path parent = entry->original.parent_path();
  UniqueFd parent_fd(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd)
    return core::fail("the directory " + parent.string() + " it came from is gone (" +
                          core::errno_name(errno) + "); nothing was restored",
                      "hint: make it again, or copy what you need from " + entry->stored.string());
  struct stat st {};
  if (entry->parent_ino != 0 && (::fstat(parent_fd.get(), &st) != 0 ||
                                 st.st_dev != entry->parent_dev || st.st_ino != entry->parent_ino))
    return core::fail("the directory " + parent.string() +
                          " is not the one it came from (it was replaced, perhaps by a symlink); "
                          "nothing was restored",
                      "hint: copy what you need from " + entry->stored.string());
  UniqueFd entry_fd(::open((root / name).c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!entry_fd) return fail_sys("open(\"" + (root / name).string() + "\")", errno);
  const std::string base = entry->stored.filename().string();
  const std::string target = entry->original.filename().string();
  if (::renameat2(entry_fd.get(), base.c_str(), parent_fd.get(), target.c_str(),
                  RENAME_NOREPLACE) != 0) {
    if (errno != EXDEV)
      return fail_sys(
          "rename(\"" + entry->stored.string() + "\", \"" + entry->original.string() + "\")",
          errno);
    UniqueFd from(::open((root / name).c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    UniqueFd to(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!from || !to) return fail_sys("open(\"" + parent.string() + "\")", errno);
    if (base != target) return core::fail("cannot restore across filesystems under another name");
    CopyBudget budget = kUnbounded;  // what the user asked back, whole
    if (auto r = copy_node(from.get(), base, to.get(), 0, budget); !r)
      return std::unexpected(r.error());
  }
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root_fd) remove_node(root_fd.get(), name, 0);
  return *entry;
}

std::optional<std::vector<std::string>> entry_names(int dir_fd) {
  // A directory stream of its own: readdir needs a readable descriptor and moves its offset.
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* stream = fd >= 0 ? ::fdopendir(fd) : nullptr;
  if (stream == nullptr) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    errno = err;
    return std::nullopt;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(stream)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(stream);
  return names;
}

std::string describe_quarantined(const QuarantineEntry& entry) {
  return "moved " + entry.original.string() + " to the quarantine (" + entry.why +
         "); restore with: pi-sandbox quarantine restore " + entry.id;
}

}  // namespace pisandbox::sandbox::linux_
