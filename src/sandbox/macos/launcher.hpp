// pisandbox::sandbox::macos — the applier (Apple platforms only; docs/macos.md): the command's
// private directories, then sandbox-exec in a process group of its own, killed whole when the
// command ends, times out or is cancelled.
//
// Not built or run on Linux: only a Mac can prove it (docs/macos.md, "The manual check list").
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <stop_token>

#include "core/error.hpp"
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

/// How a launch ended: the exit status of pi-sandbox(1) ("EXIT STATUS": the command's, 128+N,
/// 124 after the timeout, 130/143 when cancelled), or an Error when the command could not be
/// started (the caller exits 125).
///   timeout: none, or how long the command may run (milliseconds).
///   cancel:  requested by a signal to pi-sandbox or an abort from serve; `cancel_status` is the
///            status reported then (130 or 143).
struct LaunchOptions {
  std::optional<std::chrono::milliseconds> timeout;
  std::stop_token cancel;
  int cancel_status = 143;
};

/// Spawns `plan` (posix_spawn, POSIX_SPAWN_SETPGROUP: a new process group) with `cwd` and waits.
/// On the timeout or a cancel the whole group gets SIGKILL; when the command exits, the group's
/// remaining processes (background children) get SIGKILL too, as pid 1 of the Linux sandbox
/// takes its namespace down.
core::Result<int> launch(const LaunchPlan& plan, const std::filesystem::path& cwd,
                         const LaunchOptions& options);

}  // namespace pisandbox::sandbox::macos
