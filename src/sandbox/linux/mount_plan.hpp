// pisandbox::sandbox::linux_ — the mount plan: the ordered list of mount operations that
// builds the sandbox's filesystem view from a SandboxPolicy (pure: planned as a value that
// `pi-sandbox policy` prints and unit tests compare whole, then applied).
//
// The plan is computed from the policy plus facts about the host's paths (a PathProbe),
// printed by `pi-sandbox policy`, compared whole in unit tests, and only then applied by
// mounts.cpp inside the sandbox's own mount namespace.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;

/// What lstat(2) says about a host path.
enum class PathKind { Missing, File, Directory, Symlink, Other };

/// Facts about one host path: its kind and, for a symlink, its raw target (readlink).
struct PathFacts {
  PathKind kind = PathKind::Missing;
  fs::path link_target;
};

/// Returns the facts of an absolute host path without following a final symlink.
using PathProbe = std::function<PathFacts(const fs::path&)>;

/// The kinds of mount operation, in the vocabulary of bubblewrap's setup ops.
enum class MountOpKind {
  RootReadOnly,     ///< recursive bind of the host "/" as the new root, read-only, nosuid, nodev
  Tmpfs,            ///< a private, empty tmpfs at `target` with `mode`
  Proc,             ///< a new procfs for the sandbox's pid namespace
  DevPts,           ///< a new devpts instance (ptmxmode=0666)
  Bind,             ///< bind `source` (host) onto `target`, `read_only` or not, recursive
  Symlink,          ///< create a symlink `target` -> `source` inside a private tmpfs
  PinSymlink,       ///< bind the symlink at `target` onto itself: it can be neither
                    ///< replaced, removed nor renamed (docs/cases.md, C-01, C-04)
  HostPlaceholder,  ///< `target` is missing on the host in a writable place: create an empty
                    ///< directory there (placeholders.hpp), bind it read-only, remove it
                    ///< afterwards
  MaskMissing,      ///< `target` lies in a private tmpfs: create it there and mask it
  HostScaffold,     ///< `target` is a missing parent of a protected name in a writable place:
                    ///< create it on the host as an ordinary, usable directory (marked), so only
                    ///< the protected name itself is held; removed afterwards while still empty
                    ///< (docs/cases.md, C-15)
  Overlay,          ///< an overlay with the host directory `source` as its lower layer and a
                    ///< throw-away upper layer in the tmpfs budget, mounted on `target`
                    ///< (policy::Access::CopyOnWrite); a read-only bind where overlayfs cannot be
                    ///< mounted, with one note on stderr
  Conceal,          ///< an empty read-only file (or directory, by `node`) mounted over `target`,
                    ///< which exists: a credential inside a re-exposed directory
  ConfigCopy,       ///< the host file `source` read while the host's tree is in place, its
                    ///< credentials removed (policy/credential_lines.hpp, by `config`), written
                    ///< to the tmpfs budget and bound read-only onto `target`; empty, with a
                    ///< note on stderr, when it cannot be read or taken apart
};

/// What the applier does when a Bind op's source has vanished between planning and applying
/// (another sandbox may remove its placeholder at any moment).
enum class IfSourceMissing {
  Fail,         ///< a setup error (the workspace, device nodes)
  Skip,         ///< nothing to expose (a re-exposed path inside the hidden home)
  Placeholder,  ///< a protection: put a placeholder there instead (placeholders.hpp)
  Scaffold,     ///< a pinned parent of a protected path: made as a scaffold when missing, and
                ///< a scaffold held (shared lock) so that no other sandbox removes it meanwhile
};

/// Whether a Bind op's source may be reached through symlinks: only paths re-exposed in the
/// hidden home (a dotfile manager's ~/.gitconfig link); never anything in the workspace.
enum class SourceSymlinks { Refuse, Follow };

/// One step of the plan. Fields not used by a kind are empty.
///   target: absolute path in the sandbox's view (equal to the host path for binds).
///   source: host path for Bind; link text for Symlink.
///   node:   for Bind/HostPlaceholder/MaskMissing, whether a file or a directory.
///   mode:   octal mode for Tmpfs ("0755").
///   why:    a short reason printed by `pi-sandbox policy`.
///   if_missing: for Bind, what to do when the source has vanished by the time it is applied.
///   source_symlinks: for Bind, whether symlinks on the way to the source are followed.
struct MountOp {
  MountOpKind kind;
  fs::path target;
  fs::path source;
  bool read_only = false;
  policy::NodeKind node = policy::NodeKind::Directory;
  std::string mode;
  std::string why;
  IfSourceMissing if_missing = IfSourceMissing::Fail;
  SourceSymlinks source_symlinks = SourceSymlinks::Refuse;
  /// For Tmpfs: 0 for a tmpfs of its own (the kernel's default size); otherwise every Tmpfs
  /// op with this size shares one tmpfs of `size_bytes` bytes (the limits' tmpfs budget),
  /// each target a directory of it.
  std::uint64_t size_bytes = 0;
  /// For ConfigCopy: the syntax of the file, which says what its credentials are.
  std::optional<policy::ConfigFormat> config = {};

  friend bool operator==(const MountOp&, const MountOp&) = default;
};

/// A protected name missing in a writable place, guarded instead of held by a placeholder
/// (policy::Protection::Guard; sandbox/linux/guard.hpp): nothing is made on the host, and what a
/// command creates there is moved to the quarantine at once.
///   path: absolute host path, without symlinks (the planner resolved them);
///   base: the writable mount root that contains it (the workspace, a read-write git
///     directory, ...): a mount point inside the sandbox, so it cannot be renamed, and the guard
///     walks from it without following symlinks;
///   why:  the protection's reason (`dangerous-file`, `git-hooks`, ...).
struct GuardedName {
  fs::path path;
  fs::path base;
  std::string why;

  friend bool operator==(const GuardedName&, const GuardedName&) = default;
};

/// The whole plan plus what the supervisor must watch for after the command.
///   ops: applied in order.
///   unprotectable: protected paths the plan cannot enforce, each with the reason (the run
///     refuses to start when this is not empty: fail closed, docs/cases.md, C-04).
///   guarded: the missing protected names the supervisor guards (empty in strict mode).
struct MountPlan {
  std::vector<MountOp> ops;
  std::vector<std::string> unprotectable;
  std::vector<GuardedName> guarded = {};

  friend bool operator==(const MountPlan&, const MountPlan&) = default;
};

/// Host device nodes bound into the sandbox's private /dev.
const std::vector<std::string_view>& dev_nodes();

/// Builds the mount plan for `policy`; `protected_paths` are the policy's own plus the
/// scan's (policy/protected_scan.hpp). `probe` answers lstat questions about host paths.
/// Pure given the probe; never fails (problems go to MountPlan::unprotectable).
MountPlan plan_mounts(const policy::SandboxPolicy& policy,
                      const std::vector<policy::ProtectedPath>& protected_paths,
                      const PathProbe& probe);

/// The probe for the real host filesystem (lstat + readlink).
PathFacts probe_host_path(const fs::path& path);

/// One line per op, for `pi-sandbox policy`: e.g. `bind-ro   /home/u/.gitconfig`.
std::string describe(const MountOp& op);
std::string_view to_string(MountOpKind kind);

}  // namespace pisandbox::sandbox::linux_
