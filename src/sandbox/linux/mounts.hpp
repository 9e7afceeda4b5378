// pisandbox::sandbox::linux_ — the mount applier: turns a MountPlan into the sandbox's
// filesystem view. Runs in the sandbox's pid 1, in its own user and mount namespaces.
#pragma once

#include <vector>

#include "core/error.hpp"
#include "sandbox/linux/mount_plan.hpp"
#include "sandbox/linux/placeholders.hpp"

namespace pisandbox::sandbox::linux_ {

/// Applies `plan` and switches the root (pivot_root). On success the calling process sees
/// only the new view; `placeholders` receives the host placeholders created or adopted
/// (they must be removed after the command, see placeholders.hpp). Errors name the step,
/// the syscall and the path, e.g. `mount("/home/u/ws", MS_BIND): EACCES (Permission denied)`.
core::Result<void> apply_mount_plan(const MountPlan& plan, std::vector<Placeholder>& placeholders);

}  // namespace pisandbox::sandbox::linux_
