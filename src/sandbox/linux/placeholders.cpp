#include "sandbox/linux/placeholders.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdint>
#include <ctime>

#include "sandbox/linux/resolve.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

namespace fs = std::filesystem;
using core::UniqueFd;

/// Attempts at creating or adopting before giving up (another sandbox may be removing the
/// same placeholder at the same moment).
constexpr int kAttempts = 8;

bool is_marked(int fd) {
  char value[8];
  return ::fgetxattr(fd, kPlaceholderXattr, value, sizeof value) >= 0;
}

/// For removal: marked, or on a filesystem without user xattrs (where the inode check
/// alone identifies the placeholder this sandbox created).
bool may_be_ours(int fd) {
  char value[8];
  return ::fgetxattr(fd, kPlaceholderXattr, value, sizeof value) >= 0 || errno == ENOTSUP;
}

bool is_empty_directory(int fd) {
  const int dup_fd = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dup_fd < 0) return false;
  DIR* dir = ::fdopendir(dup_fd);
  if (dir == nullptr) {
    ::close(dup_fd);
    return false;
  }
  bool empty = true;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (name != "." && name != "..") empty = false;
  }
  ::closedir(dir);
  return empty;
}

UniqueFd open_directory(int dir_fd, const char* name) {
  return UniqueFd(::openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

bool same_inode(int dir_fd, const char* name, int fd) {
  struct stat by_name {
  }, by_fd{};
  return ::fstatat(dir_fd, name, &by_name, AT_SYMLINK_NOFOLLOW) == 0 && ::fstat(fd, &by_fd) == 0 &&
         by_name.st_ino == by_fd.st_ino && by_name.st_dev == by_fd.st_dev;
}

ino_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/// A temporary name unique across sandboxes (every sandbox's pid 1 has pid 1, so the pid
/// cannot tell them apart).
std::string temp_name(const std::string& name) {
  std::uint64_t nonce = 0;
  if (::getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
    nonce = static_cast<std::uint64_t>(::time(nullptr)) ^ reinterpret_cast<std::uintptr_t>(&nonce);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(nonce));
  return ".pi-sandbox-placeholder." + std::string(hex) + "." + name;
}

/// What stands at `name` now: a placeholder adopted under a shared lock, a foreign entry,
/// or nothing (it vanished: the caller tries again).
enum class Existing { Adopted, Foreign, Vanished };

Existing adopt(int dir_fd, const fs::path& path, std::optional<Placeholder>& out) {
  const std::string name = path.filename().string();
  UniqueFd fd = open_directory(dir_fd, name.c_str());
  if (!fd) {
    struct stat st {};
    return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? Existing::Foreign
                                                                          : Existing::Vanished;
  }
  if (!is_marked(fd.get())) return Existing::Foreign;
  if (::flock(fd.get(), LOCK_SH) != 0) return Existing::Vanished;
  // Its creator may have removed it between our open and our lock: look again.
  if (!same_inode(dir_fd, name.c_str(), fd.get())) return Existing::Vanished;
  out = Placeholder{path, inode_of(fd.get()), std::move(fd)};
  return Existing::Adopted;
}

core::Result<UniqueFd> make_marked(int dir_fd, const fs::path& path, const std::string& tmp) {
  const std::string shown = path.parent_path() / tmp;
  if (::mkdirat(dir_fd, tmp.c_str(), 0755) != 0)
    return core::fail_errno("mkdirat(\"" + shown + "\")");
  UniqueFd fd = open_directory(dir_fd, tmp.c_str());
  if (!fd) return core::fail_errno("openat(\"" + shown + "\", O_DIRECTORY)");
  // Filesystems without user xattrs still get placeholders; only concurrent adoption
  // (another sandbox reusing this one) is then unavailable.
  (void)::fsetxattr(fd.get(), kPlaceholderXattr, "1", 1, 0);
  if (::flock(fd.get(), LOCK_SH) != 0) return core::fail_errno("flock(\"" + shown + "\")");
  return fd;
}

}  // namespace

core::Result<PlaceholderSlot> create_placeholder(const fs::path& path) {
  const fs::path parent = path.parent_path();
  UniqueFd dir(open_no_symlinks(parent, O_RDONLY | O_DIRECTORY));
  if (!dir) return core::fail_errno("open(\"" + parent.string() + "\", O_DIRECTORY)");
  const std::string name = path.filename().string();
  const std::string tmp = temp_name(name);
  auto fd = make_marked(dir.get(), path, tmp);
  if (!fd) return std::unexpected(fd.error());
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (::renameat2(dir.get(), tmp.c_str(), dir.get(), name.c_str(), RENAME_NOREPLACE) == 0)
      return PlaceholderSlot{Placeholder{path, inode_of(fd->get()), std::move(*fd)}};
    const int err = errno;
    if (err != EEXIST) {
      ::unlinkat(dir.get(), tmp.c_str(), AT_REMOVEDIR);
      return std::unexpected(
          core::sys_error("renameat2(\"" + tmp + "\", \"" + path.string() + "\")", err));
    }
    std::optional<Placeholder> adopted;
    const Existing existing = adopt(dir.get(), path, adopted);
    if (existing == Existing::Vanished) continue;
    ::unlinkat(dir.get(), tmp.c_str(), AT_REMOVEDIR);
    return PlaceholderSlot{std::move(adopted)};
  }
  ::unlinkat(dir.get(), tmp.c_str(), AT_REMOVEDIR);
  return core::fail("placeholder \"" + path.string() +
                    "\" kept appearing and vanishing while the sandbox was set up");
}

std::optional<Placeholder> adopt_if_placeholder(const fs::path& path) {
  UniqueFd dir(open_no_symlinks(path.parent_path(), O_RDONLY | O_DIRECTORY));
  if (!dir) return std::nullopt;
  std::optional<Placeholder> adopted;
  adopt(dir.get(), path, adopted);
  return adopted;
}

core::Result<std::optional<Placeholder>> hold_or_make_scaffold(const fs::path& path) {
  const fs::path parent = path.parent_path();
  const std::string name = path.filename().string();
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    UniqueFd dir(open_no_symlinks(parent, O_RDONLY | O_DIRECTORY));
    if (!dir) return core::fail_errno("open(\"" + parent.string() + "\", O_DIRECTORY)");
    bool made = false;
    if (::mkdirat(dir.get(), name.c_str(), 0755) == 0) {
      made = true;
    } else if (errno != EEXIST) {
      return core::fail_errno("mkdirat(\"" + path.string() + "\")");
    }
    UniqueFd fd = open_directory(dir.get(), name.c_str());
    if (!fd) {
      const int err = errno;
      if (err == EMFILE || err == ENFILE || err == ENOMEM)
        return std::unexpected(core::sys_error(
            "open(\"" + path.string() + "\", O_DIRECTORY)", err,
            "hint: the sandbox's set-up holds a descriptor for each protected path until the "
            "root is switched; raise the hard limit of open files (`ulimit -Hn`, "
            "LimitNOFILE=) or remove nested repositories the workspace does not need"));
      struct stat st {};
      if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
      return core::fail("\"" + path.string() + "\" is not a directory",
                        "hint: a symlink or file appeared there while the sandbox was set up; "
                        "run it again");
    }
    if (made) (void)::fsetxattr(fd.get(), kScaffoldXattr, "1", 1, 0);
    char value[8];
    if (::fgetxattr(fd.get(), kScaffoldXattr, value, sizeof value) < 0)
      return std::nullopt;  // an ordinary directory: nothing to hold or remove
    // Held shared, a scaffold is not removed by another sandbox meanwhile; one that was removed
    // between the open and the lock is made again.
    if (::flock(fd.get(), LOCK_SH) != 0)
      return core::fail_errno("flock(\"" + path.string() + "\")");
    if (!same_inode(dir.get(), name.c_str(), fd.get())) continue;
    const ino_t inode = inode_of(fd.get());
    return Placeholder{path, inode, std::move(fd), true};
  }
  return core::fail("scaffold \"" + path.string() +
                    "\" kept appearing and vanishing while the sandbox was set up");
}

namespace {

bool is_scaffold(int fd) {
  char value[8];
  return ::fgetxattr(fd, kScaffoldXattr, value, sizeof value) >= 0;
}

/// Removes the empty scaffolds at and above `path`, nearest first (unmounting this
/// sandbox's pin on each first, inside its own mount namespace).
void remove_empty_scaffolds(fs::path path, Unmask unmask) {
  for (; path.has_relative_path(); path = path.parent_path()) {
    // A pin is a bind of the scaffold onto itself: what it shows is the scaffold, and the
    // lock taken through it is the scaffold's. Exclusive only while no other sandbox holds it.
    UniqueFd held(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!held || !is_scaffold(held.get()) || !is_empty_directory(held.get())) return;
    if (::flock(held.get(), LOCK_EX | LOCK_NB) != 0) return;
    if (unmask == Unmask::Yes) ::umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
    UniqueFd dir(open_no_symlinks(path.parent_path(), O_RDONLY | O_DIRECTORY));
    if (!dir) return;
    const std::string name = path.filename().string();
    if (!same_inode(dir.get(), name.c_str(), held.get()) || !is_empty_directory(held.get())) return;
    if (::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) != 0) return;
  }
}

}  // namespace

void remove_placeholder(Placeholder& placeholder, Unmask unmask) {
  if (unmask == Unmask::Yes) ::umount2(placeholder.path.c_str(), MNT_DETACH);
  if (placeholder.scaffold) {
    placeholder.lock.reset();
    remove_empty_scaffolds(placeholder.path, unmask);
    return;
  }
  UniqueFd dir(open_no_symlinks(placeholder.path.parent_path(), O_RDONLY | O_DIRECTORY));
  if (!dir) return;
  const std::string name = placeholder.path.filename().string();
  if (!placeholder.lock) placeholder.lock = open_directory(dir.get(), name.c_str());
  const int fd = placeholder.lock.get();
  if (fd < 0) return;
  // Converting our shared lock to an exclusive one fails while any other sandbox holds it.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return;
  if (inode_of(fd) == placeholder.inode && same_inode(dir.get(), name.c_str(), fd) &&
      may_be_ours(fd) && is_empty_directory(fd) &&
      ::unlinkat(dir.get(), name.c_str(), AT_REMOVEDIR) == 0)
    remove_empty_scaffolds(placeholder.path.parent_path(), unmask);
  placeholder.lock.reset();
}

}  // namespace pisandbox::sandbox::linux_
