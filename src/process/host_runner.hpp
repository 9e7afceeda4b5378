// pisandbox::process — running a command on the host, outside any sandbox, for an approved
// host-IPC run (docs/host-ipc.md, "The host run").
#pragma once

#include "sandbox/command.hpp"

namespace pisandbox::process {

/// Runs `command` on the host with the same timeout, cancellation and output semantics as
/// a sandboxed run (sandbox::RunOptions):
///   - the program is command.argv (for host IPC: {"/bin/bash", "-c", <command>}), started
///     in command.cwd with exactly command.env, in a new process group;
///   - if stdin is the caller's terminal and the caller is its foreground process group,
///     the new group becomes the foreground group while it runs (so `tmux attach` works),
///     and the caller's group is restored afterwards;
///   - when the program exits, is timed out or cancelled, the whole process group is
///     killed (SIGKILL): a `sleep 600 &` left behind never holds the call open, and nothing
///     of the run stays on the host except processes that left the group on purpose
///     (`setsid`, e.g. a tmux server), whose output is no longer read; if pi-sandbox itself
///     is killed (even SIGKILL), a small watcher process kills the group;
///   - with options.output, stdout and stderr are pipes read into the sink until the
///     program has exited and what it wrote is read.
/// Returns Exited/Signaled; TimedOut or Aborted after killing the group; LaunchFailed when
/// the program could not be started (`fork()`, `pipe2()`, `chdir("<cwd>")` or
/// `execve("<program>")` with errno).
[[nodiscard]] sandbox::Outcome run_on_host(const sandbox::Command& command,
                                           const sandbox::RunOptions& options);

}  // namespace pisandbox::process
