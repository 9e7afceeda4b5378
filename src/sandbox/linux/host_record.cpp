#include "sandbox/linux/host_record.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstring>
#include <map>
#include <sstream>
#include <tuple>

namespace pisandbox::sandbox::linux_ {

namespace {

// ---- The child: the filter and its SIGSYS handler ----
//
// The handler runs inside a trapped call of libc (stat, open, readlink...), so it allocates
// nothing: what it records goes into a fixed arena mapped before the filter, and its own calls
// carry kMagic in their sixth argument, which the filter lets through. None of the trapped
// calls has a sixth argument (syscalls(2)), so the kernel ignores it.

constexpr std::uint64_t kMagic = 0x7069526563307264ULL;
constexpr std::size_t kArenaBytes = 64u << 20;
/// A file whose content is recorded (HostRead::content) and is longer than this makes the
/// record incomplete: a change past what was kept would go unseen.
constexpr std::size_t kContentLimit = 4u << 20;

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#endif

/// The calls that read what a path names: recorded, then made.
constexpr long kReads[] = {
#ifdef SYS_open
    SYS_open,
#endif
#ifdef SYS_stat
    SYS_stat,
#endif
#ifdef SYS_lstat
    SYS_lstat,
#endif
#ifdef SYS_access
    SYS_access,
#endif
#ifdef SYS_readlink
    SYS_readlink,
#endif
    SYS_openat,     SYS_openat2,    SYS_newfstatat, SYS_statx,     SYS_faccessat,
    SYS_faccessat2, SYS_readlinkat, SYS_getxattr,   SYS_lgetxattr, SYS_listxattr,
    SYS_llistxattr, SYS_statfs,     SYS_chdir,
};

/// The calls that change the host, or read it in ways the record cannot follow: refused
/// (EPERM) and the record marked incomplete. A computation made ahead reads, never writes.
constexpr long kRefused[] = {
#ifdef SYS_mkdir
    SYS_mkdir,
#endif
#ifdef SYS_rmdir
    SYS_rmdir,
#endif
#ifdef SYS_unlink
    SYS_unlink,
#endif
#ifdef SYS_rename
    SYS_rename,
#endif
#ifdef SYS_link
    SYS_link,
#endif
#ifdef SYS_symlink
    SYS_symlink,
#endif
#ifdef SYS_chmod
    SYS_chmod,
#endif
#ifdef SYS_chown
    SYS_chown,
#endif
#ifdef SYS_lchown
    SYS_lchown,
#endif
#ifdef SYS_creat
    SYS_creat,
#endif
#ifdef SYS_mknod
    SYS_mknod,
#endif
#ifdef SYS_utimes
    SYS_utimes,
#endif
    SYS_mkdirat,
    SYS_unlinkat,
    SYS_renameat2,
    SYS_linkat,
    SYS_symlinkat,
    SYS_fchmodat,
    SYS_fchownat,
    SYS_mknodat,
    SYS_utimensat,
    SYS_setxattr,
    SYS_lsetxattr,
    SYS_removexattr,
    SYS_lremovexattr,
    SYS_truncate,
    SYS_execve,
    SYS_execveat,
    SYS_name_to_handle_at,
    SYS_open_by_handle_at,
    SYS_mount,
    SYS_umount2,
    SYS_clone3,
    SYS_fchdir,
#ifdef SYS_renameat
    SYS_renameat,
#endif
#ifdef SYS_fork
    SYS_fork,
#endif
#ifdef SYS_vfork
    SYS_vfork,
#endif
#ifdef SYS_utime
    SYS_utime,
#endif
    // A process or thread of its own would read into a record that is not this one; a socket
    // (nscd, a daemon), io_uring and fanotify read the host without naming a path to a call
    // the filter sees.
    SYS_clone,
    SYS_io_uring_setup,
    SYS_socket,
    SYS_connect,
    SYS_inotify_add_watch,
    SYS_fanotify_init,
};

struct ChildState {
  char* arena = nullptr;
  std::size_t used = 0;
  bool incomplete = false;
  char why[512] = {};
  bool has_ram = false;
  std::uint64_t ram = 0;
  char path[PATH_MAX * 2];
  char scratch[PATH_MAX * 2];
  char dirents[32 * 1024];
};
ChildState* g_child = nullptr;

long raw(long nr, long a0 = 0, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0) {
  const long r = ::syscall(nr, a0, a1, a2, a3, a4, static_cast<long>(kMagic));
  return r == -1 ? -errno : r;
}

void append_text(char* out, std::size_t size, const char* text) {
  const std::size_t have = std::strlen(out);
  for (std::size_t i = 0; text[i] != '\0' && have + i + 1 < size; ++i) {
    out[have + i] = text[i];
    out[have + i + 1] = '\0';
  }
}

void mark_incomplete(const char* what, const char* path = nullptr) {
  if (g_child->incomplete) return;
  g_child->incomplete = true;
  append_text(g_child->why, sizeof g_child->why, what);
  if (path != nullptr) {
    append_text(g_child->why, sizeof g_child->why, ": ");
    append_text(g_child->why, sizeof g_child->why, path);
  }
}

void number_text(long n, char* out) {
  char digits[24];
  int i = 0;
  if (n == 0) digits[i++] = '0';
  for (; n > 0; n /= 10) digits[i++] = static_cast<char>('0' + n % 10);
  int j = 0;
  while (i > 0) out[j++] = digits[--i];
  out[j] = '\0';
}

StatTuple tuple_of(const char* path, bool follow) {
  struct stat st {};
  const long r = raw(SYS_newfstatat, AT_FDCWD, reinterpret_cast<long>(path),
                     reinterpret_cast<long>(&st), follow ? 0 : AT_SYMLINK_NOFOLLOW);
  StatTuple t;
  if (r < 0) {
    t.error = static_cast<int>(-r);
    return t;
  }
  t.dev = st.st_dev;
  t.ino = st.st_ino;
  t.mode = st.st_mode;
  t.uid = st.st_uid;
  t.gid = st.st_gid;
  t.nlink = st.st_nlink;
  t.size = st.st_size;
  t.mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
  t.ctime_ns = st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec;
  return t;
}

/// The directory part of `path` into `out` ("/" for "/x" and "/").
void parent_of(const char* path, char* out) {
  std::size_t n = std::strlen(path);
  while (n > 1 && path[n - 1] == '/') --n;
  while (n > 0 && path[n - 1] != '/') --n;
  while (n > 1 && path[n - 1] == '/') --n;
  if (n == 0) n = 1;
  std::memcpy(out, path, n);
  out[n] = '\0';
}

/// The link of `/proc/self/fd/<fd>` (or the working directory for AT_FDCWD) into `out`;
/// false when it names no path (a pipe, a socket) or a deleted file.
enum class FdPath { Path, NotAFile, Unnamed };
FdPath fd_path(long fd, char* out, std::size_t size) {
  if (static_cast<int>(fd) == AT_FDCWD) {
    const long r = raw(SYS_getcwd, reinterpret_cast<long>(out), static_cast<long>(size));
    return r > 0 && out[0] == '/' ? FdPath::Path : FdPath::Unnamed;
  }
  char link[64] = "/proc/self/fd/";
  number_text(fd, link + std::strlen(link));
  const long n = raw(SYS_readlinkat, AT_FDCWD, reinterpret_cast<long>(link),
                     reinterpret_cast<long>(out), static_cast<long>(size - 1));
  if (n <= 0) return FdPath::Unnamed;
  out[n] = '\0';
  if (out[0] != '/') return FdPath::NotAFile;
  if (n > 10 && std::strcmp(out + n - 10, " (deleted)") == 0) return FdPath::Unnamed;
  return FdPath::Path;
}

/// The file system type under `path`: of the path, else of its nearest existing ancestor.
long fs_type(const char* path) {
  char* probe = g_child->scratch;
  std::strcpy(probe, path);
  for (;;) {
    struct statfs st {};
    if (raw(SYS_statfs, reinterpret_cast<long>(probe), reinterpret_cast<long>(&st)) == 0)
      return static_cast<long>(st.f_type);
    if (std::strcmp(probe, "/") == 0) return -1;
    char up[PATH_MAX * 2];
    parent_of(probe, up);
    std::strcpy(probe, up);
  }
}

enum class FsKind { Kept, Pseudo, Unknown };

/// Whether the kernel keeps ctime for the files of `type` as inode(7) says (local file
/// systems), or the content must be compared (pseudo file systems), or neither (NFS, FUSE:
/// times come from a server, attributes are cached): then the record is incomplete.
FsKind kind_of(long type) {
  switch (static_cast<unsigned long>(type) & 0xffffffffUL) {
    case EXT4_SUPER_MAGIC:
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case F2FS_SUPER_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case SQUASHFS_MAGIC:
    case 0xca451a4eUL:  // bcachefs
    case 0x2fc12fc1UL:  // zfs
      return FsKind::Kept;
    // The kernel's own: what they show is the kernel's state, compared by content.
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case DEVPTS_SUPER_MAGIC:
    case 0x19800202UL:  // mqueue
    case HUGETLBFS_MAGIC:
    case SECURITYFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case BPF_FS_MAGIC:
    case 0x65735543UL:  // fusectl
    case 0x62656570UL:  // configfs
    case PSTOREFS_MAGIC:
    case BINFMTFS_MAGIC:
    case NSFS_MAGIC:
    case EFIVARFS_MAGIC:
    case AUTOFS_SUPER_MAGIC:
    case SELINUX_MAGIC:
      return FsKind::Pseudo;
    default:
      return FsKind::Unknown;
  }
}

/// What a pseudo file system shows of a tuple: whether it exists, its type, permissions and
/// owner; the inode numbers and times of proc(5) are the reading process's.
StatTuple pseudo(StatTuple t) {
  t.dev = t.ino = t.nlink = 0;
  t.size = t.mtime_ns = t.ctime_ns = 0;
  return t;
}

bool arena_put(const void* bytes, std::size_t n) {
  if (g_child->used + n > kArenaBytes) {
    mark_incomplete("the record is full");
    return false;
  }
  std::memcpy(g_child->arena + g_child->used, bytes, n);
  g_child->used += n;
  return true;
}

/// The content of the file at `path` as HostRead::content says, appended to the arena; a
/// regular file longer than kContentLimit makes the record incomplete.
void put_content(const char* path, const StatTuple& seen) {
  if (seen.error != 0) return;
  if (S_ISLNK(seen.mode)) {
    const long n =
        raw(SYS_readlinkat, AT_FDCWD, reinterpret_cast<long>(path),
            reinterpret_cast<long>(g_child->scratch), static_cast<long>(sizeof g_child->scratch));
    if (n > 0) arena_put(g_child->scratch, static_cast<std::size_t>(n));
    return;
  }
  if (!S_ISDIR(seen.mode) && !S_ISREG(seen.mode)) return;
  const long fd = raw(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path),
                      O_RDONLY | O_CLOEXEC | O_NONBLOCK | (S_ISDIR(seen.mode) ? O_DIRECTORY : 0));
  if (fd < 0) return;
  if (S_ISDIR(seen.mode)) {
    for (;;) {
      const long n = raw(SYS_getdents64, fd, reinterpret_cast<long>(g_child->dirents),
                         static_cast<long>(sizeof g_child->dirents));
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const dirent64*>(g_child->dirents + at);
        arena_put(entry->d_name, std::strlen(entry->d_name));
        arena_put("\n", 1);
        at += entry->d_reclen;
      }
    }
  } else {
    std::size_t total = 0;
    for (;;) {
      const long n = raw(SYS_read, fd, reinterpret_cast<long>(g_child->dirents),
                         static_cast<long>(sizeof g_child->dirents));
      if (n <= 0) break;
      total += static_cast<std::size_t>(n);
      if (total > kContentLimit) {
        mark_incomplete("a file too long to record its content", path);
        break;
      }
      arena_put(g_child->dirents, static_cast<std::size_t>(n));
    }
  }
  raw(SYS_close, fd);
}

/// The arena's form of one HostRead: this head, the path, the content.
struct EntryHead {
  std::uint32_t path_len;
  std::uint32_t content_len;
  std::uint8_t follow;
  std::uint8_t has_content;
  std::uint8_t seen_pseudo;
  std::uint8_t parent_pseudo;
  StatTuple seen;
  StatTuple parent;
};

/// Records what `path` (absolute) is now, with its parent, before the call reads it; on a
/// pseudo file system, with its content when the call reads it (`reads`: an open or a
/// readlink, not a stat or an access check); a regular file, with its content when the call
/// is an open that may read it (`opens_content`: not O_PATH's, not a readlink(2) of a file).
void record_path(const char* path, bool follow, bool reads, bool opens_content) {
  StatTuple seen = tuple_of(path, follow);
  char parent_path[PATH_MAX * 2];
  parent_of(path, parent_path);
  StatTuple parent = tuple_of(parent_path, true);
  // A link that is not followed lies in its parent's file system (statfs(2) would follow it);
  // anything else, a mount point too, in its own.
  const bool link = seen.error == 0 && S_ISLNK(seen.mode);
  const FsKind own = kind_of(fs_type(link ? parent_path : path));
  const FsKind up = kind_of(fs_type(parent_path));
  if (own == FsKind::Unknown || up == FsKind::Unknown)
    return mark_incomplete("a file system that does not keep ctime", path);
  if (own == FsKind::Pseudo) seen = pseudo(seen);
  if (up == FsKind::Pseudo) parent = pseudo(parent);
  // A regular file that is read has its content recorded too: a write through a shared
  // mapping whose page is already dirty moves no time (the times move at the write fault of a
  // clean page: mmap(2), inode(7)), so the tuple alone would not tell it.
  const bool regular = seen.error == 0 && S_ISREG(seen.mode) && opens_content;
  const std::size_t start = g_child->used;
  EntryHead head{static_cast<std::uint32_t>(std::strlen(path)),
                 0,
                 follow ? std::uint8_t{1} : std::uint8_t{0},
                 (own == FsKind::Pseudo || regular) && reads ? std::uint8_t{1} : std::uint8_t{0},
                 own == FsKind::Pseudo ? std::uint8_t{1} : std::uint8_t{0},
                 up == FsKind::Pseudo ? std::uint8_t{1} : std::uint8_t{0},
                 seen,
                 parent};
  if (!arena_put(&head, sizeof head) || !arena_put(path, head.path_len)) return;
  if (head.has_content == 0) return;
  const std::size_t content_start = g_child->used;
  put_content(path, seen);
  head.content_len = static_cast<std::uint32_t>(g_child->used - content_start);
  std::memcpy(g_child->arena + start, &head, sizeof head);
}

/// The absolute path a call names: `name` relative to `dirfd` (or the file of `dirfd` itself
/// when `name` is empty and `empty_path`); false when it names no file of the host.
bool named_path(long dirfd, const char* name, bool empty_path, char* out) {
  const std::size_t size = PATH_MAX * 2;
  if (name != nullptr && name[0] == '/') {
    if (std::strlen(name) >= size) return mark_incomplete("a path too long to record"), false;
    std::strcpy(out, name);
    return true;
  }
  const bool whole_fd = name == nullptr || name[0] == '\0';
  if (whole_fd && !empty_path) return false;  // ENOENT: the call reads nothing
  switch (fd_path(dirfd, out, size)) {
    case FdPath::NotAFile:
      return false;
    case FdPath::Unnamed:
      mark_incomplete("a file that has no name to record");
      return false;
    case FdPath::Path:
      break;
  }
  if (whole_fd) return true;
  if (std::strlen(out) + std::strlen(name) + 2 >= size)
    return mark_incomplete("a path too long to record"), false;
  if (std::strcmp(out, "/") != 0) std::strcat(out, "/");
  std::strcat(out, name);
  return true;
}

bool in(const long* list, std::size_t n, long nr) {
  return std::find(list, list + n, nr) != list + n;
}

/// Records the path the call `nr` with arguments `a` names, if any; false for an open that
/// would write (refused: the record is then incomplete).
bool record_call(long nr, const long* a) {
  long dirfd = AT_FDCWD;
  const char* name = nullptr;
  bool follow = true;
  bool empty_path = false;
  bool reads = false;
  bool opens_content = false;  // an open but O_PATH's, which reads nothing (open(2))
  bool refused = false;
  const auto str = [](long v) { return reinterpret_cast<const char*>(v); };
  // O_TMPFILE holds O_DIRECTORY's bit: it is told by all of its bits.
  const auto writes = [](unsigned long flags) {
    return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0 ||
           (flags & O_TMPFILE) == O_TMPFILE;
  };
  switch (nr) {
#ifdef SYS_open
    case SYS_open:
      reads = true;
      name = str(a[0]);
      follow = (a[1] & O_NOFOLLOW) == 0;
      opens_content = (a[1] & O_PATH) == 0;
      refused = writes(static_cast<unsigned long>(a[1]));
      break;
#endif
#ifdef SYS_stat
    case SYS_stat:
      name = str(a[0]);
      break;
#endif
#ifdef SYS_lstat
    case SYS_lstat:
      name = str(a[0]);
      follow = false;
      break;
#endif
#ifdef SYS_access
    case SYS_access:
      name = str(a[0]);
      break;
#endif
#ifdef SYS_readlink
    case SYS_readlink:
      reads = true;
      name = str(a[0]);
      follow = false;
      break;
#endif
    case SYS_openat:
      reads = true;
      dirfd = a[0];
      name = str(a[1]);
      follow = (a[2] & O_NOFOLLOW) == 0;
      opens_content = (a[2] & O_PATH) == 0;
      refused = writes(static_cast<unsigned long>(a[2]));
      break;
    case SYS_openat2: {
      reads = true;
      dirfd = a[0];
      name = str(a[1]);
      const auto* how = reinterpret_cast<const open_how*>(a[2]);
      follow = (how->flags & O_NOFOLLOW) == 0;
      opens_content = (how->flags & O_PATH) == 0;
      refused = writes(how->flags);
      break;
    }
    case SYS_newfstatat:
      dirfd = a[0];
      name = str(a[1]);
      follow = (a[3] & AT_SYMLINK_NOFOLLOW) == 0;
      empty_path = (a[3] & AT_EMPTY_PATH) != 0;
      break;
    case SYS_statx:
      dirfd = a[0];
      name = str(a[1]);
      follow = (a[2] & AT_SYMLINK_NOFOLLOW) == 0;
      empty_path = (a[2] & AT_EMPTY_PATH) != 0;
      break;
    case SYS_faccessat:
      dirfd = a[0];
      name = str(a[1]);
      break;
    case SYS_faccessat2:
      dirfd = a[0];
      name = str(a[1]);
      follow = (a[3] & AT_SYMLINK_NOFOLLOW) == 0;
      empty_path = (a[3] & AT_EMPTY_PATH) != 0;
      break;
    case SYS_readlinkat:
      reads = true;
      dirfd = a[0];
      name = str(a[1]);
      follow = false;
      break;
    case SYS_lgetxattr:
    case SYS_llistxattr:
      follow = false;
      [[fallthrough]];
    case SYS_getxattr:
    case SYS_listxattr:
    case SYS_statfs:
    case SYS_chdir:
      name = str(a[0]);
      break;
    default:
      return true;
  }
  if (refused) {
    mark_incomplete("an open for writing", name);
    return false;
  }
  char* path = g_child->path;
  if (named_path(dirfd, name, empty_path, path)) record_path(path, follow, reads, opens_content);
  return true;
}

long handle(long nr, const long* a) {
  if (in(kReads, std::size(kReads), nr)) {
    if (!record_call(nr, a)) return -EPERM;
    return raw(nr, a[0], a[1], a[2], a[3], a[4]);
  }
  if (nr == SYS_sysinfo) {
    const long r = raw(nr, a[0]);
    if (r == 0) {
      const auto* info = reinterpret_cast<const struct sysinfo*>(a[0]);
      g_child->has_ram = true;
      g_child->ram = static_cast<std::uint64_t>(info->totalram) * info->mem_unit;
    }
    return r;
  }
  // Named by its number (syscalls(2)): the handler has no table of names.
  char number[24];
  number_text(nr, number);
  mark_incomplete(in(kRefused, std::size(kRefused), nr) ? "a refused system call"
                                                        : "a system call the record cannot follow",
                  number);
  return -EPERM;
}

void on_sigsys(int, siginfo_t* info, void* context) {
  const int saved = errno;
  auto* uc = static_cast<ucontext_t*>(context);
#if defined(__x86_64__)
  auto& g = uc->uc_mcontext.gregs;
  const long a[6] = {g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10], g[REG_R8], g[REG_R9]};
  g[REG_RAX] = info->si_arch == kAuditArch ? handle(info->si_syscall, a) : -ENOSYS;
#elif defined(__aarch64__)
  auto& r = uc->uc_mcontext.regs;
  const long a[6] = {static_cast<long>(r[0]), static_cast<long>(r[1]), static_cast<long>(r[2]),
                     static_cast<long>(r[3]), static_cast<long>(r[4]), static_cast<long>(r[5])};
  r[0] = static_cast<unsigned long>(info->si_arch == kAuditArch ? handle(info->si_syscall, a)
                                                                : -ENOSYS);
#endif
  if (info->si_arch != kAuditArch) mark_incomplete("a call of another architecture");
  errno = saved;
}

/// The filter: every call of kReads, kRefused and sysinfo(2) traps unless its sixth argument
/// is kMagic; calls of another architecture or ABI (x32) trap too.
std::vector<sock_filter> recording_filter() {
  std::vector<long> trapped(std::begin(kReads), std::end(kReads));
  trapped.insert(trapped.end(), std::begin(kRefused), std::end(kRefused));
  trapped.push_back(SYS_sysinfo);
  const auto n = static_cast<std::uint8_t>(trapped.size());
  // Layout: 0 arch, 1 check, 2 nr, 3 x32, 4..4+n-1 each nr, 4+n allow, 5+n..8+n magic,
  // 9+n allow, 10+n trap.
  const std::uint8_t check = static_cast<std::uint8_t>(5 + n);
  const std::uint8_t trap = static_cast<std::uint8_t>(10 + n);
  std::vector<sock_filter> f;
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  f.push_back(
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 0, static_cast<std::uint8_t>(trap - 2)));
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  f.push_back(
      BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U, static_cast<std::uint8_t>(trap - 4), 0));
  for (std::uint8_t i = 0; i < n; ++i)
    f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(trapped[i]),
                         static_cast<std::uint8_t>(check - (4 + i) - 1), 0));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[5])));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(kMagic), 0, 3));
  f.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[5]) + 4));
  f.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(kMagic >> 32), 0, 1));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  f.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP));
  return f;
}

bool write_whole(int fd, const void* bytes, std::size_t n) {
  const auto* p = static_cast<const char*>(bytes);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

/// What the child sends: this head, `why`, the arena.
struct ChildHead {
  std::uint8_t incomplete;
  std::uint8_t has_ram;
  std::uint64_t ram;
  std::uint32_t why_len;
  std::uint64_t arena_len;
};

[[noreturn]] void child_main(int out, const std::function<bool()>& compute) {
  static ChildState state;
  g_child = &state;
  void* arena = ::mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  std::vector<sock_filter> filter = recording_filter();
  sock_fprog program{static_cast<unsigned short>(filter.size()), filter.data()};
  struct sigaction action {};
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  sigset_t sys;
  sigemptyset(&sys);
  sigaddset(&sys, SIGSYS);
  if (arena == MAP_FAILED || ::sigaction(SIGSYS, &action, nullptr) != 0 ||
      ::sigprocmask(SIG_UNBLOCK, &sys, nullptr) != 0 ||
      ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
    ::_exit(3);
  state.arena = static_cast<char*>(arena);
  // The filter proves itself first: an ordinary stat(2) must have been trapped and recorded.
  struct stat root {};
  (void)::stat("/", &root);
  if (state.used == 0) mark_incomplete("the filter did not trap stat(\"/\")");
  try {
    if (!compute()) mark_incomplete("the computation failed");
  } catch (...) {
    mark_incomplete("the computation threw");
  }
  ChildHead head{state.incomplete ? std::uint8_t{1} : std::uint8_t{0},
                 state.has_ram ? std::uint8_t{1} : std::uint8_t{0}, state.ram,
                 static_cast<std::uint32_t>(std::strlen(state.why)), state.used};
  const bool sent = write_whole(out, &head, sizeof head) &&
                    write_whole(out, state.why, head.why_len) &&
                    write_whole(out, state.arena, state.used);
  ::_exit(sent ? 0 : 4);
}

// ---- The parent: reading the record, comparing it ----

std::int64_t now_ns(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

/// The sorted lines of `text` (a pseudo directory's names come in the kernel's order).
std::string sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::ranges::sort(lines);
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

/// Parses the child's arena into `record`; false when it is malformed.
bool parse_arena(const std::string& bytes, HostRecord& record) {
  std::map<std::tuple<std::string, bool, bool>, std::size_t> seen_at;
  for (std::size_t at = 0; at < bytes.size();) {
    EntryHead head{};
    if (bytes.size() - at < sizeof head) return false;
    std::memcpy(&head, bytes.data() + at, sizeof head);
    at += sizeof head;
    if (bytes.size() - at < std::size_t{head.path_len} + head.content_len) return false;
    HostRead read;
    read.path.assign(bytes, at, head.path_len);
    at += head.path_len;
    read.follow = head.follow != 0;
    read.pseudo_seen = head.seen_pseudo != 0;
    read.pseudo_parent = head.parent_pseudo != 0;
    read.seen = head.seen;
    read.parent = head.parent;
    if (head.has_content != 0) {
      read.content = bytes.substr(at, head.content_len);
      if (S_ISDIR(read.seen.mode)) read.content = sorted_lines(*read.content);
    }
    at += head.content_len;
    // The same path read twice must have been the same both times: otherwise it changed while
    // the computation ran, and what it computed may mix both.
    const auto key = std::tuple{read.path, read.follow, read.content.has_value()};
    if (auto it = seen_at.find(key); it != seen_at.end()) {
      if (!(record.reads[it->second] == read)) {
        record.complete = false;
        record.why = read.path + ": changed while it was read";
      }
      continue;
    }
    seen_at.emplace(key, record.reads.size());
    record.reads.push_back(std::move(read));
  }
  return true;
}

StatTuple host_tuple(const std::string& path, bool follow) {
  struct stat st {};
  StatTuple t;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) {
    t.error = errno;
    return t;
  }
  t.dev = st.st_dev;
  t.ino = st.st_ino;
  t.mode = st.st_mode;
  t.uid = st.st_uid;
  t.gid = st.st_gid;
  t.nlink = st.st_nlink;
  t.size = st.st_size;
  t.mtime_ns = st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec;
  t.ctime_ns = st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec;
  return t;
}

/// A recorded file's content now (a pseudo file's, a regular file's), as put_content() records
/// it.
std::string pseudo_content(const std::string& path, const StatTuple& seen) {
  if (seen.error != 0) return {};
  if (S_ISLNK(seen.mode)) {
    char target[PATH_MAX];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
    return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : std::string();
  }
  if (S_ISDIR(seen.mode)) {
    std::string names;
    if (DIR* dir = ::opendir(path.c_str()); dir != nullptr) {
      while (const dirent* entry = ::readdir(dir)) names += std::string(entry->d_name) + "\n";
      ::closedir(dir);
    }
    return sorted_lines(names);
  }
  if (!S_ISREG(seen.mode)) return {};
  std::string text;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  char buffer[16 * 1024];
  // One byte past the limit: a file grown past it differs from any content recorded.
  while (text.size() <= kContentLimit) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof buffer, kContentLimit + 1 - text.size()));
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

/// Whether the regular file at `path` still holds `recorded` (its whole content, as
/// put_content() recorded it), compared as it is read, with no copy. `exact_size`: the file's
/// stat(2) size is its content's length (a file on a disk file system, not a pseudo file):
/// then one read(2) of one byte more than recorded ends the comparison when it returns
/// exactly the recorded length, a short read at the end of the file; otherwise reads go on
/// until read(2) returns 0.
bool regular_content_equal(const std::string& path, const std::string& recorded, bool exact_size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char buffer[16 * 1024];
  std::size_t at = 0;
  bool equal = true;
  while (true) {
    // At most one byte past the recorded length: a longer file differs.
    const std::size_t want = std::min(sizeof buffer, recorded.size() + 1 - at);
    const ssize_t n = ::read(fd, buffer, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      equal = false;
      break;
    }
    const auto got = static_cast<std::size_t>(n);
    if (got == 0) {
      equal = at == recorded.size();
      break;
    }
    if (got > recorded.size() - at || std::memcmp(buffer, recorded.data() + at, got) != 0) {
      equal = false;
      break;
    }
    at += got;
    if (exact_size && at == recorded.size() && got < want) break;
  }
  ::close(fd);
  return equal;
}

/// Whether the content `recorded` of `path` (as `now` says it is) still is its content.
bool content_equal(const std::string& path, const StatTuple& now, bool pseudo,
                   const std::string& recorded) {
  if (now.error == 0 && S_ISREG(now.mode))
    return regular_content_equal(path, recorded,
                                 !pseudo && now.size == static_cast<std::int64_t>(recorded.size()));
  return pseudo_content(path, now) == recorded;
}

std::string parent_path(const std::string& path) {
  char out[PATH_MAX * 2];
  if (path.size() >= sizeof out) return "/";
  parent_of(path.c_str(), out);
  return out;
}

std::int64_t coarse_tick_ns() {
  timespec res{};
  if (::clock_getres(CLOCK_REALTIME_COARSE, &res) != 0) return 10'000'000;
  return std::max<std::int64_t>(res.tv_sec * 1'000'000'000LL + res.tv_nsec, 1'000'000);
}

}  // namespace

core::Result<HostRecord> record_host_reads(const std::function<bool()>& compute) {
  HostRecord record;
#if !defined(__x86_64__) && !defined(__aarch64__)
  (void)compute;
  record.why = "no recorder for this architecture";
  return record;
#else
  record.started_ns = now_ns(CLOCK_REALTIME);
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return core::fail_errno("record_host_reads: pipe2()");
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    return core::fail_errno("record_host_reads: fork()");
  }
  if (pid == 0) {
    ::close(ends[0]);
    child_main(ends[1], compute);
  }
  ::close(ends[1]);
  std::string bytes;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(ends[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(ends[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return core::fail_errno("record_host_reads: waitpid()");
  if (WIFSIGNALED(status))
    return core::fail("record_host_reads: the recording child was killed by signal " +
                      std::to_string(WTERMSIG(status)));
  ChildHead head{};
  if (WEXITSTATUS(status) != 0 || bytes.size() < sizeof head ||
      (std::memcpy(&head, bytes.data(), sizeof head), bytes.size() - sizeof head < head.why_len) ||
      bytes.size() - sizeof head - head.why_len != head.arena_len) {
    record.why = "the recording child ended with status " + std::to_string(WEXITSTATUS(status));
    return record;
  }
  record.complete = head.incomplete == 0;
  record.why.assign(bytes, sizeof head, head.why_len);
  if (head.has_ram != 0) record.total_ram = head.ram;
  if (!parse_arena(bytes.substr(sizeof head + head.why_len), record)) {
    record.complete = false;
    record.why = "a malformed record";
  }
  return record;
#endif
}

std::int64_t racy_for_ns(const HostRecord& record) {
  const std::int64_t margin = 2 * coarse_tick_ns();
  std::int64_t newest = 0;
  for (const auto& read : record.reads)
    for (const StatTuple* t : {&read.seen, &read.parent})
      newest = std::max({newest, t->mtime_ns, t->ctime_ns});
  if (newest < record.started_ns - margin) return 0;
  return std::max<std::int64_t>(newest + margin - now_ns(CLOCK_REALTIME), 0) + margin;
}

bool racy(const HostRecord& record) {
  return racy_for_ns(record) > 0;
}

bool host_unchanged(const HostRecord& record, std::string* why) {
  const auto differs = [why](const std::string& what) {
    if (why != nullptr) *why = what + ": changed";
    return false;
  };
  if (!record.complete) {
    if (why != nullptr) *why = record.why;
    return false;
  }
  // Each path is stat(2)ed once: many are the parents of others, or recorded both followed
  // and not.
  std::map<std::pair<std::string, bool>, StatTuple> now_of;
  const auto tuple = [&now_of](const std::string& path, bool follow) {
    auto [it, fresh] = now_of.try_emplace({path, follow});
    if (fresh) it->second = host_tuple(path, follow);
    return it->second;
  };
  for (const auto& read : record.reads) {
    const std::string up = parent_path(read.path);
    // A name missing from a directory whose tuple is unchanged is still missing: making it
    // would have moved the directory's mtime and ctime (inode(7)). Not so a path that was
    // followed: its name may be a symbolic link whose target was missing and is made
    // elsewhere, which moves no time of this directory.
    if (read.seen.error == ENOENT && !read.follow && read.parent.error == 0 &&
        S_ISDIR(read.parent.mode) && !read.pseudo_parent) {
      if (tuple(up, true) != read.parent) return differs(up);
      continue;
    }
    StatTuple now = tuple(read.path, read.follow);
    if (read.pseudo_seen) now = pseudo(now);
    if (now != read.seen) return differs(read.path);
    const StatTuple parent = tuple(up, true);
    if ((read.pseudo_parent ? pseudo(parent) : parent) != read.parent) return differs(up);
    if (read.content && !content_equal(read.path, now, read.pseudo_seen, *read.content))
      return differs(read.path);
  }
  if (record.total_ram) {
    struct sysinfo info {};
    if (::sysinfo(&info) != 0 ||
        static_cast<std::uint64_t>(info.totalram) * info.mem_unit != *record.total_ram)
      return differs("the machine's memory");
  }
  return true;
}

}  // namespace pisandbox::sandbox::linux_
