// pisandbox::sandbox::linux_ — the supervisor side of one sandbox: clone into new
// namespaces, write the id maps, wait, enforce the timeout and cancellation, clean up.
#pragma once

#include <functional>
#include <string>

#include "sandbox/command.hpp"
#include "sandbox/linux/launch_spec.hpp"

namespace pisandbox::sandbox::linux_ {

/// Runs `spec` in new user, mount, pid, network, ipc and uts namespaces and waits for it.
/// Without RunOptions::output the caller's stdout and stderr reach the command directly;
/// with it, both are pipes read into the sink. RunOptions::stdin_fd replaces stdin. The
/// calling process must be single-threaded (pid 1 runs after a fork-like clone3).
/// Returns the command's exit status or signal; TimedOut / Aborted after killing the whole
/// sandbox; LaunchFailed with the failing step (and a hint) when nothing could run.
Outcome launch(LaunchSpec spec, const RunOptions& options);

}  // namespace pisandbox::sandbox::linux_
