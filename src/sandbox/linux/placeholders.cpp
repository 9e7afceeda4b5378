#include "sandbox/linux/placeholders.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <optional>

namespace pisandbox::sandbox::linux_ {

namespace {

namespace fs = std::filesystem;
using core::UniqueFd;
using policy::NodeKind;

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

bool is_empty(int fd, NodeKind node) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return false;
  if (node == NodeKind::File) return S_ISREG(st.st_mode) && st.st_size == 0;
  if (!S_ISDIR(st.st_mode)) return false;
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

UniqueFd open_entry(int dir_fd, const char* name, NodeKind node) {
  const int flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
                    (node == NodeKind::Directory ? O_DIRECTORY : 0);
  return UniqueFd(::openat(dir_fd, name, flags));
}

bool same_inode(int dir_fd, const char* name, int fd) {
  struct stat by_name {}, by_fd {};
  return ::fstatat(dir_fd, name, &by_name, AT_SYMLINK_NOFOLLOW) == 0 &&
         ::fstat(fd, &by_fd) == 0 && by_name.st_ino == by_fd.st_ino &&
         by_name.st_dev == by_fd.st_dev;
}

ino_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

std::string temp_name(const std::string& name) {
  static std::atomic<unsigned> counter{0};
  return ".pi-sandbox-placeholder." + std::to_string(::getpid()) + "." +
         std::to_string(counter++) + "." + name;
}

/// Takes a shared lock on the existing entry `name` and checks it is still the same inode.
std::optional<Placeholder> adopt(int dir_fd, const fs::path& path, NodeKind node) {
  const std::string name = path.filename().string();
  for (int attempt = 0; attempt < 3; ++attempt) {
    UniqueFd fd = open_entry(dir_fd, name.c_str(), node);
    if (!fd || !is_marked(fd.get())) return std::nullopt;
    if (::flock(fd.get(), LOCK_SH) != 0) return std::nullopt;
    // The creator may have removed it between our open and our lock: check again.
    if (same_inode(dir_fd, name.c_str(), fd.get()))
      return Placeholder{path, node, inode_of(fd.get()), std::move(fd)};
  }
  return std::nullopt;
}

core::Result<UniqueFd> make_marked(int dir_fd, const fs::path& path, const std::string& tmp,
                                   NodeKind node) {
  const std::string shown = path.parent_path() / tmp;
  if (node == NodeKind::Directory) {
    if (::mkdirat(dir_fd, tmp.c_str(), 0755) != 0)
      return core::fail_errno("mkdirat(\"" + shown + "\")");
  } else {
    const int fd = ::openat(dir_fd, tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0) return core::fail_errno("openat(\"" + shown + "\", O_CREAT|O_EXCL)");
    ::close(fd);
  }
  UniqueFd fd = open_entry(dir_fd, tmp.c_str(), node);
  if (!fd) return core::fail_errno("openat(\"" + shown + "\")");
  // Filesystems without user xattrs still get placeholders; only concurrent adoption
  // (another sandbox reusing this one) is then unavailable.
  (void)::fsetxattr(fd.get(), kPlaceholderXattr, "1", 1, 0);
  if (::flock(fd.get(), LOCK_SH) != 0) return core::fail_errno("flock(\"" + shown + "\")");
  return fd;
}

}  // namespace

core::Result<Placeholder> create_placeholder(const fs::path& path, NodeKind node) {
  const fs::path parent = path.parent_path();
  UniqueFd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return core::fail_errno("open(\"" + parent.string() + "\", O_DIRECTORY)");
  const std::string name = path.filename().string();
  const std::string tmp = temp_name(name);
  auto fd = make_marked(dir.get(), path, tmp, node);
  if (!fd) return std::unexpected(fd.error());
  if (::renameat2(dir.get(), tmp.c_str(), dir.get(), name.c_str(), RENAME_NOREPLACE) == 0)
    return Placeholder{path, node, inode_of(fd->get()), std::move(*fd)};
  const int err = errno;
  ::unlinkat(dir.get(), tmp.c_str(), node == NodeKind::Directory ? AT_REMOVEDIR : 0);
  if (err == EEXIST) {
    if (auto adopted = adopt(dir.get(), path, node)) return std::move(*adopted);
    return core::fail("placeholder \"" + path.string() +
                      "\" appeared while the sandbox was being set up; run the command again");
  }
  return std::unexpected(
      core::sys_error("renameat2(\"" + tmp + "\", \"" + path.string() + "\")", err));
}

std::optional<Placeholder> adopt_if_placeholder(const fs::path& path) {
  UniqueFd dir(::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return std::nullopt;
  struct stat st {};
  if (::fstatat(dir.get(), path.filename().c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return std::nullopt;
  const NodeKind node = S_ISDIR(st.st_mode) ? NodeKind::Directory : NodeKind::File;
  return adopt(dir.get(), path, node);
}

void remove_placeholder(Placeholder& placeholder, Unmask unmask) {
  if (unmask == Unmask::Yes) ::umount2(placeholder.path.c_str(), MNT_DETACH);
  UniqueFd dir(::open(placeholder.path.parent_path().c_str(),
                      O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return;
  const std::string name = placeholder.path.filename().string();
  if (!placeholder.lock) placeholder.lock = open_entry(dir.get(), name.c_str(), placeholder.node);
  const int fd = placeholder.lock.get();
  if (fd < 0) return;
  // Converting our shared lock to an exclusive one fails while any other sandbox holds it.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return;
  if (inode_of(fd) == placeholder.inode && same_inode(dir.get(), name.c_str(), fd) &&
      may_be_ours(fd) && is_empty(fd, placeholder.node))
    ::unlinkat(dir.get(), name.c_str(),
               placeholder.node == NodeKind::Directory ? AT_REMOVEDIR : 0);
  placeholder.lock.reset();
}

}  // namespace pisandbox::sandbox::linux_
