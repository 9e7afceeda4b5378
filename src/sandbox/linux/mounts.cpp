#include "sandbox/linux/mounts.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <expected>
#include <map>

#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/credential_lines.hpp"
#include "sandbox/linux/resolve.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

namespace fs = std::filesystem;
using core::Result;
using core::UniqueFd;
using policy::NodeKind;

/// Where the new root is assembled before pivot_root: a private tmpfs mounted over /tmp in
/// the sandbox's own mount namespace (every bind source is opened before, so hiding the
/// host's /tmp here hides nothing the plan needs).
constexpr const char* kStaging = "/tmp";
constexpr const char* kNewRoot = "/tmp/pi-sandbox-root";
/// Where the shared tmpfs budget is mounted before its directories are bound into the new
/// root (MountOp::size_bytes); detached with the old root, it lives on in those binds.
constexpr const char* kBudget = "/tmp/pi-sandbox-tmpfs";
/// The text of the dangling symlink that stands for a protected file in a private tmpfs:
/// reading it gives ENOENT and creating through it fails, as "/" is read-only.
constexpr const char* kMissingTarget = "/nonexistent/pi-sandbox-protected";

std::string quoted(const fs::path& p) {
  return "\"" + p.string() + "\"";
}

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

std::string symlink_hint() {
  return errno == ELOOP ? "hint: a symlink appeared on the way (another sandbox of this "
                          "workspace, or a symlinked home or temp directory); run it again"
                        : "";
}

Result<void> set_attr(const std::string& path, std::uint64_t attrs, unsigned flags,
                      const fs::path& shown) {
  mount_attr attr{};
  attr.attr_set = attrs;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), flags, &attr, sizeof attr) != 0)
    return core::fail_errno("mount_setattr(" + quoted(shown) + ")",
                            errno == ENOSYS ? "hint: pi-sandbox needs Linux 5.12 or later" : "");
  return {};
}

Result<void> mkdirs(const fs::path& path) {
  fs::path current = "/";
  for (const auto& part : path.relative_path()) {
    current /= part;
    if (::mkdir(current.c_str(), 0755) != 0 && errno != EEXIST)
      return core::fail_errno("mkdir(" + quoted(current) + ")");
  }
  return {};
}

/// The mode for a directory made at `made` (a path in the new root) to hold a mount point: the
/// mode of the host's directory at the same path (lstat(2), not through a symlink) where there is
/// one, never looser than 0755 and always 0700 for its owner; 0755 otherwise. gpg refuses a home
/// shown looser than the host's 0700 (`unsafe permissions on homedir`). The host's tree is still in
/// place while the new root is built (only /tmp is the staging tmpfs there, so a host path under
/// /tmp reads as missing).
mode_t mount_point_mode(const fs::path& made) {
  const fs::path relative = made.lexically_relative(kNewRoot);
  if (relative.empty() || *relative.begin() == "..") return 0755;
  const fs::path host = fs::path("/") / relative;
  struct stat st {};
  if (::lstat(host.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return 0755;
  // Its owner, the sandbox's user, always passes: a host directory it cannot enter (0500, 0000)
  // would otherwise stop the command, which has no CAP_DAC_OVERRIDE, short of what is exposed.
  return (st.st_mode & 0755) | 0700;
}

/// Makes sure a mount point of the right kind exists at `target` (inside a private tmpfs
/// when it has to be created; the read-only host view already has every host path). Never
/// follows a symlink on the way: under the workspace another sandbox may swap a directory
/// for a symlink at any moment, and a mount point made through it would be made on the host,
/// outside the workspace (ELOOP instead).
Result<void> ensure_mount_point(const fs::path& target, NodeKind node) {
  if (UniqueFd(open_no_symlinks(target, O_PATH))) return {};
  if (errno != ENOENT)
    return core::fail_errno("openat2(" + quoted(target) + ", O_PATH)", symlink_hint());
  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  fs::path current = "/";
  const fs::path relative = target.relative_path();
  const std::vector<fs::path> parts(relative.begin(), relative.end());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    const std::string name = parts[i].string();
    current /= parts[i];
    if (last && node == NodeKind::File) {
      const int fd = ::openat(dir.get(), name.c_str(),
                              O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
      if (fd < 0) return core::fail_errno("open(" + quoted(current) + ", O_CREAT)");
      ::close(fd);
      return {};
    }
    // mkdirat(2) takes the umask off the mode, which is within 0755: never looser than it.
    if (::mkdirat(dir.get(), name.c_str(), mount_point_mode(current)) != 0 && errno != EEXIST)
      return core::fail_errno("mkdir(" + quoted(current) + ")");
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    UniqueFd next(
        static_cast<int>(::syscall(SYS_openat2, dir.get(), name.c_str(), &how, sizeof how)));
    if (!next) return core::fail_errno("openat2(" + quoted(current) + ")", symlink_hint());
    dir = std::move(next);
  }
  return {};
}

class Applier {
 public:
  Applier(const MountPlan& plan, std::vector<Placeholder>& placeholders)
      : plan_(plan), placeholders_(placeholders) {}

  Result<void> run() {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
      return core::fail_errno("mount(\"/\", MS_REC|MS_PRIVATE)");
    if (auto r = prepare_sources(); !r) return r;
    if (auto r = stage_root(); !r) return r;
    auto built = build_root();
    if (!built) {
      // Undo the staging so that the host paths resolve again for the placeholders'
      // removal, and no mount of this namespace sits on a placeholder any more.
      ::umount2(kNewRoot, MNT_DETACH);
      ::umount2(kStaging, MNT_DETACH);
    }
    return built;
  }

  Result<void> build_root() {
    for (const auto& op : plan_.ops)
      if (auto r = apply(op); !r) return r;
    return switch_root();
  }

 private:
  fs::path in_root(const fs::path& target) const {
    return fs::path(kNewRoot) / target.relative_path();
  }

  /// Opens every bind source and clones every pinned symlink while the host's tree is still
  /// in place, and creates the host placeholders.
  Result<void> prepare_sources() {
    for (const auto& op : plan_.ops) {
      if (auto r = prepare(op); !r) return r;
    }
    return {};
  }

  Result<void> prepare(const MountOp& op) {
    switch (op.kind) {
      case MountOpKind::HostPlaceholder: {
        auto slot = create_placeholder(op.target);
        if (!slot) return std::unexpected(slot.error());
        if (slot->placeholder) placeholders_.push_back(std::move(*slot->placeholder));
        return open_source(op.target, O_PATH | O_NOFOLLOW);
      }
      case MountOpKind::HostScaffold: {
        auto made = hold_or_make_scaffold(op.target);
        if (!made) return std::unexpected(made.error());
        if (*made) placeholders_.push_back(std::move(**made));
        return {};
      }
      case MountOpKind::Bind:
      case MountOpKind::Overlay:
        return prepare_bind(op);
      case MountOpKind::ConfigCopy:
        prepare_config_copy(op);
        return {};
      case MountOpKind::PinSymlink: {
        UniqueFd parent(open_no_symlinks(op.target.parent_path(), O_PATH | O_DIRECTORY));
        if (!parent) return core::fail_errno("openat2(" + quoted(op.target.parent_path()) + ")");
        UniqueFd tree(
            static_cast<int>(::syscall(SYS_open_tree, parent.get(), op.target.filename().c_str(),
                                       OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW | OPEN_TREE_CLOEXEC)));
        if (!tree) return core::fail_errno("open_tree(" + quoted(op.target) + ", OPEN_TREE_CLONE)");
        trees_[op.target] = std::move(tree);
        return {};
      }
      default:
        return {};
    }
  }

  Result<void> prepare_bind(const MountOp& op) {
    if (op.if_missing == IfSourceMissing::Scaffold) {
      // A pinned parent: made again if a scaffold vanished, held while it is one.
      auto held = hold_or_make_scaffold(op.source);
      if (!held) return std::unexpected(held.error());
      if (*held) placeholders_.push_back(std::move(**held));
    }
    if (op.if_missing == IfSourceMissing::Placeholder) {
      // An existing protected entry may be another sandbox's placeholder: hold it.
      if (auto adopted = adopt_if_placeholder(op.source))
        placeholders_.push_back(std::move(*adopted));
    }
    auto open_source_path = [&op] {
      return op.source_symlinks == SourceSymlinks::Follow
                 ? ::open(op.source.c_str(), O_PATH | O_CLOEXEC)
                 : open_no_symlinks(op.source, O_PATH);
    };
    UniqueFd fd(open_source_path());
    if (!fd && errno == ENOENT && op.if_missing == IfSourceMissing::Skip) {
      skipped_.push_back(op.target);
      return {};
    }
    if (!fd && errno == ENOENT && op.if_missing == IfSourceMissing::Placeholder) {
      auto slot = create_placeholder(op.source);
      if (!slot) return std::unexpected(slot.error());
      if (slot->placeholder) placeholders_.push_back(std::move(*slot->placeholder));
      fd.reset(open_source_path());
    }
    if (!fd) return core::fail_errno("openat2(" + quoted(op.source) + ", O_PATH)", symlink_hint());
    sources_[op.source] = std::move(fd);
    return {};
  }

  /// Reads and sanitizes the host file of a ConfigCopy op now, while the host's tree is in
  /// place (the host's /tmp is hidden once the root is staged). A file gone meanwhile has
  /// nothing to show; one that cannot be opened or taken apart is shown empty, and said so.
  void prepare_config_copy(const MountOp& op) {
    UniqueFd fd(open_no_symlinks(op.source, O_RDONLY | O_NONBLOCK | O_NOCTTY));
    if (!fd && errno == ENOENT) {
      skipped_.push_back(op.target);
      return;
    }
    policy::SanitizedConfig copy;
    if (!fd)
      copy.masked_whole = "openat2(" + quoted(op.source) + ", O_RDONLY): " + strerrorname_np(errno);
    else
      copy = policy::sanitize_config_fd(op.config.value_or(policy::ConfigFormat::Npmrc), fd.get());
    if (!copy.masked_whole.empty())
      std::fprintf(stderr, "pi-sandbox: note: %s is shown empty in this sandbox (%s)\n",
                   op.target.c_str(), copy.masked_whole.c_str());
    copies_[op.target] = std::move(copy.bytes);
  }

  Result<void> open_source(const fs::path& path, int flags) {
    UniqueFd fd(open_no_symlinks(path, flags));
    if (!fd) return core::fail_errno("openat2(" + quoted(path) + ", O_PATH)", symlink_hint());
    sources_[path] = std::move(fd);
    return {};
  }

  Result<void> stage_root() {
    if (::mount("tmpfs", kStaging, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
      return core::fail_errno("mount(\"tmpfs\", \"/tmp\")");
    if (::mkdir(kNewRoot, 0755) != 0)
      return core::fail_errno(std::string("mkdir(\"") + kNewRoot + "\")");
    return {};
  }

  /// Opens a mount target inside the new root, refusing symlinks on the way (resolve.hpp).
  Result<UniqueFd> open_target(const fs::path& target, NodeKind node) {
    const fs::path where = in_root(target);
    if (auto r = ensure_mount_point(where, node); !r) return std::unexpected(r.error());
    UniqueFd fd(open_no_symlinks(where, O_PATH));
    if (!fd) return core::fail_errno("openat2(" + quoted(target) + ", O_PATH)", symlink_hint());
    return fd;
  }

  /// Binds `source_fd` (recursively) onto `target` with `attrs`, by descriptors only: the
  /// clone of the source gets its flags while still detached, then is attached on the target
  /// opened without symlinks, so a concurrent swap cannot redirect it (resolve.hpp).
  Result<void> bind(int source_fd, const fs::path& target, NodeKind node, std::uint64_t attrs) {
    auto where = open_target(target, node);
    if (!where) return std::unexpected(where.error());
    UniqueFd tree(static_cast<int>(
        ::syscall(SYS_open_tree, source_fd, "",
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE)));
    if (!tree) return core::fail_errno("open_tree(" + quoted(target) + ", OPEN_TREE_CLONE)");
    mount_attr attr{};
    attr.attr_set = attrs;
    if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                  sizeof attr) != 0)
      return core::fail_errno("mount_setattr(" + quoted(target) + ")",
                              errno == ENOSYS ? "hint: pi-sandbox needs Linux 5.12 or later" : "");
    if (::syscall(SYS_move_mount, tree.get(), "", where->get(), "",
                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
      return core::fail_errno("move_mount(" + quoted(target) + ")");
    return {};
  }

  Result<void> apply(const MountOp& op) {
    const fs::path where = in_root(op.target);
    constexpr std::uint64_t kSafe = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    switch (op.kind) {
      case MountOpKind::RootReadOnly:
        if (::mount("/", kNewRoot, nullptr, MS_BIND | MS_REC, nullptr) != 0)
          return core::fail_errno("mount(\"/\", MS_BIND|MS_REC)");
        return set_attr(kNewRoot, MOUNT_ATTR_RDONLY | kSafe, AT_RECURSIVE, "/");
      case MountOpKind::Tmpfs: {
        if (op.size_bytes != 0) return shared_tmpfs(op);
        auto target = open_target(op.target, NodeKind::Directory);
        if (!target) return std::unexpected(target.error());
        const std::string options = "mode=" + op.mode;
        if (::mount("tmpfs", fd_path(target->get()).c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
                    options.c_str()) != 0)
          return core::fail_errno("mount(\"tmpfs\", " + quoted(op.target) + ")");
        return {};
      }
      case MountOpKind::Proc:
        if (::mount("proc", where.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
          return core::fail_errno("mount(\"proc\", " + quoted(op.target) + ")");
        return {};
      case MountOpKind::DevPts:
        if (auto r = ensure_mount_point(where, NodeKind::Directory); !r) return r;
        if (::mount("devpts", where.c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
                    "newinstance,ptmxmode=0666,mode=620,max=512") != 0)
          return core::fail_errno("mount(\"devpts\", " + quoted(op.target) + ")");
        return {};
      case MountOpKind::Symlink:
        if (::symlink(op.source.c_str(), where.c_str()) != 0)
          return core::fail_errno("symlink(" + quoted(op.target) + ")");
        return {};
      case MountOpKind::Bind: {
        if (std::ranges::find(skipped_, op.target) != skipped_.end()) return {};
        const bool device = op.target.parent_path() == "/dev";
        const std::uint64_t attrs = (device ? (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) : kSafe) |
                                    (op.read_only ? MOUNT_ATTR_RDONLY : 0);
        return bind(sources_.at(op.source).get(), op.target, op.node, attrs);
      }
      case MountOpKind::PinSymlink: {
        const int tree = trees_.at(op.target).get();
        UniqueFd parent(open_no_symlinks(where.parent_path(), O_PATH | O_DIRECTORY));
        if (!parent) return core::fail_errno("openat2(" + quoted(op.target.parent_path()) + ")");
        if (::syscall(SYS_move_mount, tree, "", parent.get(), op.target.filename().c_str(),
                      MOVE_MOUNT_F_EMPTY_PATH) != 0)
          return core::fail_errno("move_mount(" + quoted(op.target) + ")");
        return {};
      }
      case MountOpKind::HostPlaceholder:
        return bind(sources_.at(op.target).get(), op.target, NodeKind::Directory,
                    kSafe | MOUNT_ATTR_RDONLY);
      case MountOpKind::MaskMissing:
        return mask_missing(op);
      case MountOpKind::HostScaffold:
        return {};  // made on the host in prepare()
      case MountOpKind::Overlay:
        return overlay(op);
      case MountOpKind::Conceal:
        return conceal(op);
      case MountOpKind::ConfigCopy:
        return config_copy(op);
    }
    return {};
  }

  /// The tmpfs of the shared budget (MountOp::size_bytes; 0: the kernel's default size),
  /// mounted the first time it is needed.
  Result<void> ensure_budget(std::uint64_t size_bytes) {
    if (budget_mounted_) return {};
    if (::mkdir(kBudget, 0700) != 0)
      return core::fail_errno(std::string("mkdir(\"") + kBudget + "\")");
    std::string options = "mode=0755";
    if (size_bytes != 0) options += ",size=" + std::to_string(size_bytes);
    if (::mount("tmpfs", kBudget, "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
      return core::fail_errno(std::string("mount(\"tmpfs\", \"") + kBudget + "\", \"" + options +
                              "\")");
    budget_mounted_ = true;
    return {};
  }

  /// A new directory of the budget tmpfs with `mode`.
  Result<fs::path> budget_directory(std::uint64_t size_bytes, const std::string& mode) {
    if (auto r = ensure_budget(size_bytes); !r) return std::unexpected(r.error());
    const fs::path dir = fs::path(kBudget) / std::to_string(budget_dirs_++);
    if (::mkdir(dir.c_str(), 0700) != 0) return core::fail_errno("mkdir(" + quoted(dir) + ")");
    // mkdir(2) applies the umask; the mode is the plan's.
    if (::chmod(dir.c_str(), static_cast<mode_t>(std::stoul(mode, nullptr, 8))) != 0)
      return core::fail_errno("chmod(" + quoted(dir) + ", " + mode + ")");
    return dir;
  }

  /// policy::Access::CopyOnWrite: overlayfs with the host directory as its only lower layer
  /// (Documentation/filesystems/overlayfs.rst) and a throw-away upper layer in the budget. In
  /// a user namespace the kernel needs "userxattr" (Linux 5.11+). Where no overlay can be
  /// mounted, the directory is bound read-only instead, with one note.
  Result<void> overlay(const MountOp& op) {
    if (std::ranges::find(skipped_, op.target) != skipped_.end()) return {};
    constexpr std::uint64_t kSafe = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
    const int lower = sources_.at(op.source).get();
    auto scratch = budget_directory(op.size_bytes, "0755");
    if (!scratch) return std::unexpected(scratch.error());
    const fs::path upper = *scratch / "upper", work = *scratch / "work";
    if (::mkdir(upper.c_str(), 0755) != 0 || ::mkdir(work.c_str(), 0755) != 0)
      return core::fail_errno("mkdir(" + quoted(upper) + ")");
    // The upper directory's root takes the lower one's owner and mode, as on the host.
    struct stat st {};
    if (::fstat(lower, &st) == 0) {
      (void)::chown(upper.c_str(), st.st_uid, st.st_gid);
      (void)::chmod(upper.c_str(), st.st_mode & 07777);
    }
    int error = 0;
    for (const bool userxattr : {false, true}) {
      auto mounted = overlay_mount(lower, upper, work, userxattr);
      if (mounted) {
        auto where = open_target(op.target, NodeKind::Directory);
        if (!where) return std::unexpected(where.error());
        mount_attr attr{};
        attr.attr_set = kSafe;
        if (::syscall(SYS_mount_setattr, mounted->get(), "", AT_EMPTY_PATH, &attr, sizeof attr) !=
            0)
          return core::fail_errno("mount_setattr(" + quoted(op.target) + ")");
        if (::syscall(SYS_move_mount, mounted->get(), "", where->get(), "",
                      MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
          return core::fail_errno("move_mount(" + quoted(op.target) + ")");
        return {};
      }
      error = mounted.error();
    }
    std::fprintf(stderr,
                 "pi-sandbox: note: %s is read-only in this sandbox, not copy-on-write "
                 "(overlayfs: %s)\n",
                 op.target.c_str(), std::strerror(error));
    return bind(lower, op.target, NodeKind::Directory, kSafe | MOUNT_ATTR_RDONLY);
  }

  /// A detached overlay mount (fsopen/fsconfig/fsmount), or the errno of the failing step.
  static std::expected<UniqueFd, int> overlay_mount(int lower, const fs::path& upper,
                                                    const fs::path& work, bool userxattr) {
    UniqueFd context(static_cast<int>(::syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC)));
    if (!context) return std::unexpected(errno);
    const std::string lower_path = fd_path(lower);
    const auto set = [&](const char* key, const char* value) {
      return ::syscall(SYS_fsconfig, context.get(), FSCONFIG_SET_STRING, key, value, 0) == 0;
    };
    if (!set("lowerdir", lower_path.c_str()) || !set("upperdir", upper.c_str()) ||
        !set("workdir", work.c_str()))
      return std::unexpected(errno);
    if (userxattr &&
        ::syscall(SYS_fsconfig, context.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0)
      return std::unexpected(errno);
    if (::syscall(SYS_fsconfig, context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
      return std::unexpected(errno);
    UniqueFd mount(static_cast<int>(::syscall(SYS_fsmount, context.get(), FSMOUNT_CLOEXEC, 0)));
    if (!mount) return std::unexpected(errno);
    return mount;
  }

  /// An empty read-only file or directory over op.target (a credential inside a re-exposed
  /// directory). Nothing to hide when it has gone meanwhile.
  Result<void> conceal(const MountOp& op) {
    struct stat st {};
    if (::lstat(in_root(op.target).c_str(), &st) != 0) return {};
    auto dir = budget_directory(op.size_bytes, "0555");
    if (!dir) return std::unexpected(dir.error());
    fs::path source = *dir;
    if (op.node == NodeKind::File) {
      source = *dir / "empty";
      // 0400, not 0444: ssh and ssh-keygen refuse a private key readable by others with eight
      // lines of `UNPROTECTED PRIVATE KEY FILE!` (ssh(1), FILES: "not accessible by others");
      // the mask is empty and read-only by its mount whatever its mode.
      const int fd = ::open(source.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0400);
      if (fd < 0) return core::fail_errno("open(" + quoted(source) + ", O_CREAT)");
      ::close(fd);
    }
    UniqueFd fd(::open(source.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) return core::fail_errno("open(" + quoted(source) + ", O_PATH)");
    return bind(fd.get(), op.target, op.node,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  }

  /// The copy read by prepare_config_copy(), as a read-only file of the budget over op.target.
  Result<void> config_copy(const MountOp& op) {
    if (std::ranges::find(skipped_, op.target) != skipped_.end()) return {};
    auto dir = budget_directory(op.size_bytes, "0555");
    if (!dir) return std::unexpected(dir.error());
    const fs::path source = *dir / "copy";
    // Writable by its mode, read-only by its mount: a write fails with EROFS ("Read-only file
    // system"), as on the read-only bind of the host file the copy stands for, not EACCES.
    UniqueFd out(::open(source.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644));
    if (!out) return core::fail_errno("open(" + quoted(source) + ", O_CREAT)");
    if (!core::write_all(out.get(), copies_.at(op.target)))
      return core::fail_errno(
          "write(" + quoted(source) + ")",
          errno == ENOSPC ? "hint: the tmpfs budget (limits.tmpfs) is full" : "");
    UniqueFd fd(::open(source.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) return core::fail_errno("open(" + quoted(source) + ", O_PATH)");
    return bind(fd.get(), op.target, NodeKind::File,
                MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
  }

  /// One directory of the shared tmpfs budget, bound onto op.target with op.mode.
  Result<void> shared_tmpfs(const MountOp& op) {
    auto dir = budget_directory(op.size_bytes, op.mode);
    if (!dir) return std::unexpected(dir.error());
    UniqueFd fd(::open(dir->c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return core::fail_errno("open(" + quoted(*dir) + ", O_PATH)");
    return bind(fd.get(), op.target, NodeKind::Directory, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  }

  Result<void> mask_missing(const MountOp& op) {
    const fs::path where = in_root(op.target);
    if (op.node == NodeKind::Directory) {
      if (auto r = mkdirs(where); !r) return r;
      UniqueFd fd(::open(where.c_str(), O_PATH | O_CLOEXEC));
      if (!fd) return core::fail_errno("open(" + quoted(op.target) + ", O_PATH)");
      return bind(fd.get(), op.target, NodeKind::Directory, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID);
    }
    if (auto r = mkdirs(where.parent_path()); !r) return r;
    if (::symlink(kMissingTarget, where.c_str()) != 0 && errno != EEXIST)
      return core::fail_errno("symlink(" + quoted(op.target) + ")");
    UniqueFd tree(
        static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, where.c_str(),
                                   OPEN_TREE_CLONE | AT_SYMLINK_NOFOLLOW | OPEN_TREE_CLOEXEC)));
    if (!tree) return core::fail_errno("open_tree(" + quoted(op.target) + ")");
    if (::syscall(SYS_move_mount, tree.get(), "", AT_FDCWD, where.c_str(),
                  MOVE_MOUNT_F_EMPTY_PATH) != 0)
      return core::fail_errno("move_mount(" + quoted(op.target) + ")");
    return {};
  }

  Result<void> switch_root() {
    // pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only
    // the new view (the runc idiom; pivot_root(2) "NOTES").
    if (::chdir(kNewRoot) != 0) return core::fail_errno(std::string("chdir(\"") + kNewRoot + "\")");
    if (::syscall(SYS_pivot_root, ".", ".") != 0)
      return core::fail_errno("pivot_root(\".\", \".\")");
    if (::umount2(".", MNT_DETACH) != 0) return core::fail_errno("umount2(old root, MNT_DETACH)");
    if (::chdir("/") != 0) return core::fail_errno("chdir(\"/\")");
    sources_.clear();
    trees_.clear();
    return {};
  }

  const MountPlan& plan_;
  std::vector<Placeholder>& placeholders_;
  std::map<fs::path, UniqueFd> sources_;
  std::map<fs::path, UniqueFd> trees_;
  std::map<fs::path, std::string> copies_;  ///< ConfigCopy: what each target shows
  std::vector<fs::path> skipped_;
  bool budget_mounted_ = false;
  int budget_dirs_ = 0;
};

}  // namespace

Result<void> apply_mount_plan(const MountPlan& plan, std::vector<Placeholder>& placeholders) {
  return Applier(plan, placeholders).run();
}

}  // namespace pisandbox::sandbox::linux_
