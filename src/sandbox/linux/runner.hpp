// pisandbox::sandbox::linux_ — one command under a SandboxPolicy, end to end on Linux
// (docs/ARCHITECTURE.md, "The life of one command", steps 6-8).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "policy/protected_scan.hpp"
#include "policy/sandbox_policy.hpp"
#include "sandbox/command.hpp"
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

/// Runs `command` under `policy`: prepare_sandbox(), then launch(). Warnings (Landlock
/// unavailable, no cgroup) and, unless RunOptions::notice is set, the guard's reports go to
/// `warn` as whole lines.
Outcome run_sandboxed(const policy::SandboxPolicy& policy, Command command,
                      const RunOptions& options, const WarningSink& warn);

}  // namespace pisandbox::sandbox::linux_
