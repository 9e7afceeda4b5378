// The guard's file helpers (guard_files.hpp): its open(2)s, the reads of a guarded file, the
// atomic replacements of one, and the ways to make one inert in place on a full disk
// (docs/security.md, "The guard").
#include "sandbox/linux/guard_files.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/io.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;
using guard_files::out_of_resources;

namespace {

/// How often an open(2) of the guard is tried while it fails for lack of descriptors or memory,
/// and the pause between two tries: 100 ms in all, in which the proxy's thread (what usually
/// holds many descriptors) closes connections it is done with.
constexpr int kOpenTries = 6;
constexpr auto kOpenRetryPause = std::chrono::milliseconds(20);

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

namespace guard_files {

bool out_of_resources(int err) {
  return err == EMFILE || err == ENFILE || err == ENOMEM;
}

FileRead read_at(GuardOpener& opener, int dir, const std::string& name, const fs::path& shown,
                 std::size_t max_bytes) {
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

std::string key_list(const std::vector<policy::GitConfigFinding>& findings) {
  std::vector<std::string> keys;
  for (const auto& f : findings)
    if (std::ranges::find(keys, f.key) == keys.end()) keys.push_back(f.key);
  std::string text;
  for (const auto& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text;
}

}  // namespace guard_files

}  // namespace pisandbox::sandbox::linux_
