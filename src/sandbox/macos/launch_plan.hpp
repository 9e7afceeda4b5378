// pisandbox::sandbox::macos — what the macOS applier runs (pure; built on every platform and
// unit-tested here): the `sandbox-exec` argument vector and the command's environment
// (docs/macos.md), and the exit status the outcome maps to.
#pragma once

#include <string>
#include <vector>

#include "core/error.hpp"
#include "sandbox/macos/seatbelt.hpp"

namespace pisandbox::sandbox::macos {

/// The absolute path of Apple's sandbox-exec(1).
inline constexpr std::string_view kSandboxExec = "/usr/bin/sandbox-exec";

/// What posix_spawn(2) gets.
///   argv: `/usr/bin/sandbox-exec -p <profile> -- <command argv...>` (the `--` keeps a program
///         name that starts with `-` from being read as an option of sandbox-exec).
///   env:  the command's environment (`NAME=value`) in order, without its TMPDIR, TMP, TEMP
///         (and, when the home is hidden, its HOME), then `TMPDIR=`, `TMP=` and `TEMP=<the
///         private temporary directory>` and `HOME=<the throw-away home layer>`.
struct LaunchPlan {
  std::vector<std::string> argv;
  std::vector<std::string> env;

  friend bool operator==(const LaunchPlan&, const LaunchPlan&) = default;
};

/// Whether the command sees the hidden home's layer as HOME.
enum class HomeLayer { Home, Keep };

/// The plan for `argv` (not empty) under `profile` (render() of plan_seatbelt()). Pure.
LaunchPlan plan_launch(const std::string& profile, const std::vector<std::string>& argv,
                       const std::vector<std::string>& env, const SeatbeltInputs& inputs,
                       HomeLayer home);

/// One symbolic link of the throw-away home layer: `link` (inside the layer) names `target` (a
/// path re-exposed in the hidden home), so that `~/.gitconfig` with HOME set to the layer reads
/// the host's file, which the profile lets the command read and not write.
struct HomeLink {
  fs::path link;
  fs::path target;

  friend bool operator==(const HomeLink&, const HomeLink&) = default;
};

/// The links of the home layer for `policy` (empty unless the home is hidden): one per path of
/// SandboxPolicy::home_read_allowed and per writable path inside the home, at the same place
/// below `inputs.home_layer` as below the home; a path beneath one already linked is reached
/// through that link and gets none. Pure.
std::vector<HomeLink> plan_home_links(const policy::SandboxPolicy& policy,
                                      const SeatbeltInputs& inputs);

/// Makes each link of `links` (and the directories above it inside the layer). Errors name the
/// call and the path (`create_symlink(/private/var/.../home/.gitconfig): File exists`).
core::Result<void> make_home_links(const std::vector<HomeLink>& links);

/// How a command ended, as waitpid(2) reports it.
///   exited: the exit status when it exited (0-255), else the signal number (1-64).
struct Ending {
  bool exited = true;
  int status = 0;
};

/// pi-sandbox's exit status for `ending` (pi-sandbox(1), "EXIT STATUS", the same on Linux): the
/// command's own status; 128+N for signal N.
int exit_status(const Ending& ending);

}  // namespace pisandbox::sandbox::macos
