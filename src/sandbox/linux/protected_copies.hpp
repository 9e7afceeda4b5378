// pisandbox::sandbox::linux_ — copies of the protected paths in writable roots, for the weaker
// sandbox (landlock_only.hpp), which cannot bind them read-only: taken before the command, and
// after it every path that differs from its copy goes to the quarantine and the copy is put back
// (docs/security.md, "Where namespaces cannot be made").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "sandbox/linux/mount_plan.hpp"
#include "sandbox/linux/quarantine.hpp"

namespace pisandbox::sandbox::linux_ {

/// The protected paths the full sandbox would bind read-only inside `writable_roots` (the
/// plan's read-only binds of a host path onto itself and its pinned symlinks there), which
/// exist: what ProtectedCopies keeps.
std::vector<std::filesystem::path> held_in_writable_roots(
    const MountPlan& plan, const std::vector<std::filesystem::path>& writable_roots);

/// At most this much is copied (bytes of file data), else the run is refused: fail closed.
inline constexpr std::uintmax_t kMaxProtectedCopyBytes = std::uintmax_t{64} << 20;

class ProtectedCopies {
 public:
  /// Copies each of `paths` (files, directories and symlinks, never following one) into
  /// `store`, a directory the command cannot reach. Errors: the failing copy (`copy(<path>):
  /// <what>`), or EFBIG past kMaxProtectedCopyBytes.
  static core::Result<ProtectedCopies> take(const std::vector<std::filesystem::path>& paths,
                                            const std::filesystem::path& store);

  /// After the command (every process of it gone): each path that differs from its copy (type,
  /// permission bits, bytes, link text, entries) is moved to `quarantine` and the copy is put
  /// back; a path whose parent is no longer the directory it was (a symlink now) is only moved.
  /// Returns one line per path for the user.
  std::vector<std::string> put_back(Quarantine& quarantine) const;

 private:
  struct Held {
    std::filesystem::path path;
    std::filesystem::path copy;
  };
  std::vector<Held> held_;
};

}  // namespace pisandbox::sandbox::linux_
