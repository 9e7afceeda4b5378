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

/// Git hooks created by a command (docs/cases.md, C-03). A repository the command itself creates
/// has no protected hooks directory while it runs, so after the command every `.git/hooks` the
/// bounded workspace scan finds that was not protected before is listed: its files other
/// than git's `*.sample` templates.
///   known_hooks: the `.git/hooks` paths the sandbox protected (existing or placeholders).
struct HookWatch {
  std::filesystem::path workspace;
  std::vector<std::filesystem::path> known_hooks;
};
HookWatch watch_hooks(const PreparedSandbox& prepared, const std::filesystem::path& workspace);
std::vector<std::filesystem::path> new_hooks(const HookWatch& watch);

/// Runs `command` under `policy`: prepare_sandbox(), launch(), then the hook report.
/// Warnings (Landlock unavailable, hooks created) go to `warn` as whole lines.
Outcome run_sandboxed(const policy::SandboxPolicy& policy, Command command,
                      const RunOptions& options, const WarningSink& warn);

}  // namespace pisandbox::sandbox::linux_
