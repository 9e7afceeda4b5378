// pisandbox::sandbox::linux_ — the supervisor side of one sandbox: clone into new
// namespaces, write the id maps, wait, enforce the timeout and cancellation, clean up. The
// sandbox's life (prepare_launch()) is apart from its command's (run_command()), so that a
// sandbox can be made before its command is known (docs/ARCHITECTURE.md, "The life of one
// command").
#pragma once

#include <sys/types.h>

#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "sandbox/command.hpp"
#include "sandbox/linux/launch_spec.hpp"

namespace pisandbox::sandbox::linux_ {

/// A sandbox made and waiting for its command: pid 1 in new user, mount, pid, network, ipc
/// and uts namespaces and in the sandbox's cgroup, bringing up its loopback and the proxy's
/// listeners, applying the mount plan and starting its guard, then waiting for
/// run_command(); the supervisor's guard watches already. It serves one command only.
/// Destroyed without run_command() (or when run_command() could not send the command), it
/// stops pid 1, which has run nothing, and waits for it; its placeholders, cgroup and guard
/// go with it. Move-only.
class ReadySandbox {
 public:
  struct State;
  explicit ReadySandbox(std::unique_ptr<State> state);
  ReadySandbox(ReadySandbox&&) noexcept;
  ReadySandbox& operator=(ReadySandbox&&) noexcept;
  ~ReadySandbox();
  /// pid 1's pid in the caller's pid namespace, -1 once moved from.
  [[nodiscard]] pid_t pid() const;

 private:
  friend Outcome run_command(ReadySandbox sandbox, const Command& command,
                             const RunOptions& options);
  friend void start_guard_ahead(ReadySandbox& sandbox);
  std::unique_ptr<State> state_;
};

/// Makes the sandbox of `spec` (its `command` is ignored): the cgroup with spec.limits, the
/// quarantine and the guard, the clone of pid 1, the id maps and the cgroup attach. pid 1
/// sets up the rest (network, listeners when spec.proxy_listeners, mounts) while this
/// returns. The calling process must be single-threaded (pid 1 runs after a fork-like clone3).
/// Errors: LaunchFailed with the failing step (and a hint): `resource limits: ...`, `the
/// guard's quarantine: ...`, `the guard: ...`, `clone3(...)`, `write(/proc/<pid>/uid_map)`.
[[nodiscard]] std::expected<ReadySandbox, RunFailure> prepare_launch(LaunchSpec spec);

/// Tells pid 1 of `sandbox` to start its guard now (LaunchMessage::GuardStart), before
/// run_command(), which then does not tell it again: for a caller that has the command's
/// request and sets up the command's session first, so that pid 1's start runs alongside it.
/// Its start is the host as the command finds it: call it only once the command has come
/// (docs/security.md, "The guard"). A send that fails is left for run_command() to meet.
void start_guard_ahead(ReadySandbox& sandbox);

/// Runs `command` in `sandbox` and waits for it: tells pid 1 to start its guard while the
/// supervisor starts its own (docs/security.md, "The guard"), sends the command to pid 1 with
/// its stdio and, from a terminal, a private pty (docs/security.md, "The terminal"); with
/// RunOptions::gate, the command's process waits before its execve(2) until the gate answers
/// and the supervisor's guard starts once the command is handed over (before the gate opens);
/// a no kills the sandbox and returns Stale (nothing of the command ran, not even pid 1's
/// last sweep); starts the proxy and the Unix-socket broker once pid 1 has sent what they
/// need; then as launch() says. A failure of pid 1's setup is the command's LaunchFailed. The
/// sandbox is used up.
Outcome run_command(ReadySandbox sandbox, const Command& command, const RunOptions& options);

/// Runs `spec` in new user, mount, pid, network, ipc and uts namespaces and waits for it.
/// Without RunOptions::output the caller's stdout and stderr reach the command directly;
/// with it, both are pipes read into the sink. RunOptions::stdin_fd replaces stdin. The
/// calling process must be single-threaded (pid 1 runs after a fork-like clone3).
/// Returns the command's exit status or signal; TimedOut / Aborted after killing the whole
/// sandbox; LaunchFailed with the failing step (and a hint) when nothing could run.
/// prepare_launch() then run_command().
Outcome launch(LaunchSpec spec, const RunOptions& options);

}  // namespace pisandbox::sandbox::linux_
