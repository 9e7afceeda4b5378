// pisandbox::policy — the git configuration files of the home that a command reads, besides
// `~/.gitconfig` and `~/.config/git/config`: `$XDG_CONFIG_HOME/git/config` and every file they
// include (`include.path`, `includeIf.<condition>.path`), each shown as a copy without its
// credentials where a command could read it (docs/security.md, "Tool configuration without its
// credentials").
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

/// Deepest chain of includes followed, as git's own limit (config.c, MAX_INCLUDE_DEPTH).
inline constexpr int kMaxGitIncludeDepth = 10;
/// Most files listed by git_config_closure(); a real configuration includes a handful.
inline constexpr std::size_t kMaxGitConfigFiles = 64;

/// The files that `text`, the git configuration file at `file`, includes (pure): the values of
/// `include.path` and `includeIf.<condition>.path` whatever the condition (a command may meet
/// it: git-config(1), "Conditional includes"), `~/` expanded to `home`, a relative path taken
/// relative to the directory of `file` (git-config(1), "Includes"), lexically normal; nothing
/// when `text` does not parse as git reads it.
std::vector<fs::path> git_include_paths(std::string_view text, const fs::path& file,
                                        const fs::path& home);

/// `files` and every file they include, recursively (at most kMaxGitIncludeDepth deep and
/// kMaxGitConfigFiles in all), without duplicates, in the order met. Reads each existing file
/// (at most kMaxConfigBytes); one that cannot be read includes nothing.
std::vector<fs::path> git_config_closure(const std::vector<fs::path>& files, const fs::path& home);

/// The copies of `files` (git configuration, git_config_closure()) for `policy` (pure): each
/// inside the home, in the hidden home (re-exposed or not: the copy is bound where the file
/// lies; not in policy.writable, the workspace's own files) or in a home that the workspace is
/// or contains, none in a credential of
/// credential_names() (a file an include names there stays hidden), none already in
/// policy.sanitized (docs/security.md, "Tool configuration without its credentials").
std::vector<SanitizedCopy> git_config_copies(const SandboxPolicy& policy,
                                             const std::vector<fs::path>& files);

}  // namespace pisandbox::policy
