// pisandbox::sandbox::linux_ — opening host paths without following symlinks.
#pragma once

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>

namespace pisandbox::sandbox::linux_ {

/// open(2) of an absolute path that fails with ELOOP when any component is a symlink
/// (openat2 with RESOLVE_NO_SYMLINKS, Linux 5.6). Every path the applier mounts on or from
/// inside a workspace is opened this way: another sandbox of the same workspace may swap a
/// directory for a symlink at any moment, and a bind must never follow it out of the
/// workspace. `flags` are open(2) flags; O_CLOEXEC is added. Returns the fd or -1 (errno).
inline int open_no_symlinks(const std::filesystem::path& path, int flags) {
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_NO_SYMLINKS;
  return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
}

}  // namespace pisandbox::sandbox::linux_
