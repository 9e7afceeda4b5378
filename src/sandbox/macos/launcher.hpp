// pisandbox::sandbox::macos — the applier: the command's private directories, then
// sandbox-exec in a process group of its own, killed whole when the command ends, times out or
// is cancelled (docs/macos.md).
//
// Plain POSIX (posix_spawn, mkdtemp, realpath, waitid, kill), built on every platform: on Linux
// the unit test unit_macos_runner runs it with a stand-in for sandbox-exec (Seatbelt itself
// runs only on a Mac: docs/macos.md, "The manual check list").
#pragma once

#include <filesystem>

#include "core/error.hpp"
#include "sandbox/command.hpp"
#include "sandbox/macos/launch_plan.hpp"

namespace pisandbox::sandbox::macos {

/// The command's private temporary directory and home layer: made by make_private_dirs() under
/// the caller's TMPDIR (real paths, `/private/var/folders/...`), removed with everything in them
/// when destroyed.
class PrivateDirs {
 public:
  PrivateDirs(std::filesystem::path temp_dir, std::filesystem::path home_layer);
  PrivateDirs(PrivateDirs&& other) noexcept;
  PrivateDirs& operator=(PrivateDirs&&) = delete;
  PrivateDirs(const PrivateDirs&) = delete;
  PrivateDirs& operator=(const PrivateDirs&) = delete;
  ~PrivateDirs();

  [[nodiscard]] const std::filesystem::path& temp_dir() const { return temp_dir_; }
  [[nodiscard]] const std::filesystem::path& home_layer() const { return home_layer_; }

 private:
  std::filesystem::path temp_dir_;
  std::filesystem::path home_layer_;
};

/// Makes `pi-sandbox.XXXXXX/{tmp,home}` (mode 0700) under `parent` (the caller's TMPDIR) and
/// resolves them with realpath(3), since Seatbelt matches resolved paths. Errors name the call
/// (`mkdtemp(/private/var/folders/.../pi-sandbox.XXXXXX): ENOSPC`).
core::Result<PrivateDirs> make_private_dirs(const std::filesystem::path& parent);

/// Spawns `plan` (posix_spawn(2) of plan.argv[0], an absolute path, with plan.env) in `cwd`, as
/// the leader of a new process group, and supervises it until it ends:
///   - stdio: fd 0 is `options.stdin_fd` (or the caller's stdin when -1); with `options.output`,
///     fds 1 and 2 are pipes read into it (OutputPipes, `options.stderr_route`), else the
///     caller's stdout and stderr. No other descriptor of the caller reaches the command (as
///     pid 1 of the Linux sandbox closes them): glibc's addclosefrom_np(3), Apple's
///     POSIX_SPAWN_CLOEXEC_DEFAULT. Signal mask and dispositions are reset to the defaults.
///   - `options.timeout` (milliseconds) or `options.cancel_fd` becoming readable (polled, never
///     read: `run` reads its signalfd afterwards to learn the signal): the whole group gets
///     SIGKILL.
///   - when the command exits, what is left of its group (background children) gets SIGKILL
///     too, as the Linux sandbox's pid 1 takes its namespace down; what is still in the output
///     pipes then is read (a process that left the group may hold them open: not waited for).
/// Returns Exited or Signaled (the command's own ending; sandbox-exec execs the command, so its
/// wait status is the command's), RunFailure TimedOut or Aborted, or LaunchFailed when nothing
/// could be started (`posix_spawn(<argv[0]>) in <cwd>: ENOENT (...)`, `pipe()`, a thread).
/// The other RunOptions fields (proxy, notices, limits, host sockets) are the runner's.
Outcome launch(const LaunchPlan& plan, const std::filesystem::path& cwd, const RunOptions& options);

}  // namespace pisandbox::sandbox::macos
