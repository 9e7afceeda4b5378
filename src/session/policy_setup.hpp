// pisandbox::session — the first step of a command's life: the trusted configuration and the
// policy built from it for one workspace.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "config/loader.hpp"
#include "core/error.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::session {

/// Arguments shared by the commands that build a policy.
///   cwd: --cwd (default: the current directory); config: --config FILE.
///   binary_at_start: serve's own binary as it was when serve started (serve-worker passes it),
///     protected besides the running one: an upgrade that moved the running binary aside
///     (`mv pi-sandbox pi-sandbox.old`, a new file in its place) leaves /proc/self/exe naming the
///     old file, and the new one at the path the host runs must not be writable either. Empty:
///     only the running binary.
struct PolicyArgs {
  std::string cwd = ".";
  std::string config;
  std::string binary_at_start;
};

/// The real path of the running pi-sandbox binary (protected in every sandbox): /proc/self/exe
/// on Linux, whose ` (deleted)` suffix is taken off only when the running file has no link left
/// (then the file now at that path is the one to protect); _NSGetExecutablePath(3) on Apple.
/// Errors (fail closed: no sandbox without it): the call that failed, or that the binary was
/// removed while it runs, with what to do.
core::Result<std::filesystem::path> own_executable();

/// The policy for `args`: the workspace is realpath(cwd); the trusted configuration is read
/// (docs/configuration.md). Errors are user-facing lines without the `pi-sandbox: ` prefix.
///   loaded_out: when not null, receives the configuration the policy was built from.
core::Result<policy::SandboxPolicy> build_policy(const PolicyArgs& args,
                                                 config::LoadedConfig* loaded_out = nullptr);

/// The git repository whose working tree contains `workspace` (the workspace or its nearest
/// ancestor with a `.git` directory or `gitdir:` file, as git's discovery finds it), with its
/// git and common directories resolved (gitrepository-layout(5)); nullopt outside a
/// repository or when a `.git` file names nothing that exists.
std::optional<policy::GitLayout> discover_git(const std::filesystem::path& workspace);

/// The user's home: $HOME when absolute, else the password database's, else "/".
std::filesystem::path home_directory();

/// Loads the trusted configuration: `explicit_path` when not empty, else the default
/// locations under $HOME (docs/configuration.md, "Where").
core::Result<config::LoadedConfig> load_config(const std::string& explicit_path);

/// Refuses a configuration file (explicit or at a default location) that is a regular file with
/// more than one hard link: another of its names may lie in the workspace (a dotfile manager's
/// links), where sandboxed commands could rewrite it; the protection of the default locations
/// is by path and does not cover other names. A file that cannot be stat(2)ed passes (the read
/// decides). Error: `refusing the configuration <file>: it has <n> hard links, and another of
/// its names may lie inside the workspace, where sandboxed commands can write`, with a hint to
/// keep a file of its own.
core::Result<void> check_config_single_link(const std::filesystem::path& file);

/// Refuses an explicitly given configuration file (`--config FILE`, `config check FILE`) whose
/// real path lies inside `workspace` (a real path): an earlier sandboxed command could have
/// written it there (compatibility C1). A file whose real path cannot be resolved passes (it
/// was just read, so this is a race the caller's own read decides). The default locations are
/// never passed here: they are protected in every sandbox.
/// A regular file with more than one hard link is refused too, wherever its path is: another of
/// its names may lie in the workspace (a dotfile manager's links), which no path check can see.
/// Errors: `refusing the configuration <file>: it lies inside the workspace, where sandboxed
/// commands can write`, with a hint naming the default location; `refusing the configuration
/// <file>: it has <n> hard links, and another of its names may lie inside the workspace, where
/// sandboxed commands can write`, with a hint to keep a file of its own.
core::Result<void> check_config_outside(const std::filesystem::path& file,
                                        const std::filesystem::path& workspace);

/// `remote.<name>.url` of the git configuration file `config` (git-config(1)), by remote name,
/// the first value of each; empty when the file is missing, unreadable or not a regular file
/// (opened without blocking: a command may leave a FIFO there). Reads at most 1 MiB.
[[nodiscard]] std::map<std::string, std::string> remote_urls(const std::filesystem::path& config);

}  // namespace pisandbox::session
