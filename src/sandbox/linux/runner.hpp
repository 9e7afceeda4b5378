// pisandbox::sandbox::linux_ — one command under a SandboxPolicy, end to end on Linux
// (docs/ARCHITECTURE.md, "The life of one command", steps 6-8).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "policy/protected_scan.hpp"
#include "policy/sandbox_policy.hpp"
#include "sandbox/command.hpp"
#include "sandbox/linux/host_record.hpp"
#include "sandbox/linux/launch_spec.hpp"
#include "sandbox/linux/launcher.hpp"

namespace pisandbox::sandbox::linux_ {

/// Receives warning lines for the user (e.g. "Landlock is unavailable").
using WarningSink = std::function<void(const std::string&)>;

/// The plans for one command plus what the scan cost (shown by `pi-sandbox policy`).
struct PreparedSandbox {
  LaunchSpec spec;
  std::vector<policy::ProtectedPath> protected_paths;  ///< the policy's and the scan's
  policy::ScanResult scan;
};

/// Scans the workspace and computes the mount plan, the Landlock rules (at the kernel's ABI,
/// 0 when unavailable) and the seccomp table. Fails when a protected path cannot be enforced
/// (the workspace inside a protected directory): fail closed (docs/cases.md, C-04).
core::Result<PreparedSandbox> prepare_sandbox(const policy::SandboxPolicy& policy, Command command);

/// What the guard watches for this command (guard.hpp): the plan's guarded names, the
/// `config` and `config.worktree` of every repository of the workspace the scan found (their
/// git directories are then "known": the last sweep treats the others as created by the
/// command), and the quarantine in the policy's home (default_quarantine_root()).
GuardPlan plan_guard(const policy::SandboxPolicy& policy,
                     const std::vector<policy::ProtectedPath>& protected_paths,
                     const MountPlan& mounts);

/// Whether `quarantine` would be writable inside the sandbox of `policy` (in the workspace, a
/// read-write bind or a writable entry of the home): then a command could forge an entry that
/// `pi-sandbox quarantine restore` writes anywhere, and the run refuses to start.
bool quarantine_writable_inside(const policy::SandboxPolicy& policy,
                                const std::filesystem::path& quarantine);

/// What a host file of the mount plan (an op's target, a bind's source) was when a sandbox was
/// made: (st_dev, st_ino), nullopt when missing.
using SourceIdentity = std::optional<std::pair<dev_t, ino_t>>;

/// The plans of a sandbox made ahead (plan_ready()): the prepared sandbox without a command
/// and what the sources of its binds were then (source_identities of its mount plan).
struct ReadyPlan {
  PreparedSandbox prepared;
  std::vector<SourceIdentity> sources;
};

/// A sandbox made before its command is known (serve keeps one ready per workspace and
/// policy: docs/ARCHITECTURE.md, "A sandbox made ahead"): the plans it was made with, what
/// the sources of its binds were then, and the sandbox, whose pid 1 waits. It serves one
/// command, and only while it still holds: its `record` of every host input of its plans
/// unchanged (host_unchanged(), then `verified` is set and the plans are used as they are), or
/// else the plans computed again and found equal (still_holds()).
///   protected_paths / scan: PreparedSandbox's, for the command's warnings and the git state.
struct ReadyOffer {
  LaunchSpec spec;
  std::vector<SourceIdentity> sources;
  ReadySandbox sandbox;
  std::vector<policy::ProtectedPath> protected_paths;
  policy::ScanResult scan;
  HostRecord record;
  bool verified = false;
};

/// The plans of a sandbox made ahead for `policy`: prepare_sandbox() (without a command) and
/// the binds' sources. Errors: those of prepare_sandbox(); a plan that makes anything on the
/// host (placeholders or scaffolds of strict protection: a sandbox kept waiting would hold
/// them in the workspace), refused with "the plan makes placeholders on the host".
core::Result<ReadyPlan> plan_ready(const policy::SandboxPolicy& policy);

/// Makes the sandbox of `plan` (prepare_launch() with the proxy's listeners). Errors: those of
/// prepare_launch(). The calling process must be single-threaded.
core::Result<ReadyOffer> launch_ready(ReadyPlan plan);

/// plan_ready() then launch_ready() for `policy`, without a record.
core::Result<ReadyOffer> prepare_ready(const policy::SandboxPolicy& policy);

/// Whether `offer` may run a command whose freshly computed plans are `fresh`: every plan
/// equal (mounts, Landlock, seccomp, limits, cgroup support, the guard's plan, which hold the
/// configuration, the protected paths found and the workspace) and every op's target and
/// bind's source the same file as when the sandbox was made (a workspace moved away and made
/// again, a protected file or a concealed credential replaced by rename).
[[nodiscard]] bool still_holds(const ReadyOffer& offer, const LaunchSpec& fresh);

/// still_holds() for plans kept apart from their sandbox: whether `made` (plan_ready() as the
/// sandbox was made from it) and `fresh` (plans computed now) are equal in the same ways, and
/// every op's target and bind's source the same file as when `made` was planned.
[[nodiscard]] bool plans_hold(const ReadyPlan& made, const LaunchSpec& fresh);

/// Runs `command` under `policy`: prepare_sandbox(), then launch(), or run_command() in
/// `ready`'s sandbox when one is given and still_holds() (otherwise that sandbox is discarded
/// first). A `ready` offer whose record was found unchanged (ReadyOffer::verified, set by the
/// caller after host_unchanged() and a `policy` that is the offer's own) skips both: its plans
/// are the command's. Warnings (Landlock unavailable, no cgroup) and, unless RunOptions::notice is
/// set, the guard's reports go to `warn` as whole lines. `ready`'s sandbox is used up either way.
Outcome run_sandboxed(const policy::SandboxPolicy& policy, Command command,
                      const RunOptions& options, const WarningSink& warn,
                      ReadyOffer* ready = nullptr);

}  // namespace pisandbox::sandbox::linux_
