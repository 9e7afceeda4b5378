// pisandbox::policy — the configuration files a tool reads relative to its install prefix
// (`<prefix>/etc/npmrc`, `<prefix>/pip.conf`, `<prefix>/etc/gitconfig`), for every install
// prefix of the home a toolchain exposure shows: each is shown as a copy without its
// credentials, as the files of the home's own table are (docs/security.md, "Tool configuration
// without its credentials", "Toolchains in the home").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/credential_lines.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::policy {

/// One configuration file a tool reads relative to its install prefix.
///   name:       relative to the prefix (`etc/npmrc`);
///   format:     its syntax;
///   program:    the tool that reads it, and as what;
///   removed:    what the copy lacks, in words (docs/security.md's table shows the same rows, as
///               `<prefix>/<name>`: a unit test compares them).
struct PrefixConfigName {
  std::string_view name;
  ConfigFormat format;
  std::string_view program;
  std::string_view removed;
};

/// Every PrefixConfigName, in the order docs/security.md lists them: npm's global config
/// (npm-config(7), "globalconfig": `$PREFIX/etc/npmrc`), npm's builtin config (npmrc(5),
/// "Files": `/path/to/npm/npmrc`, npm's own directory under the prefix), pip's site config
/// (pip's "Configuration" page, "Site": `$VIRTUAL_ENV/pip.conf`, i.e. `sys.prefix`), and the
/// system configuration of a git installed under the prefix (git-config(1), FILES:
/// `$(prefix)/etc/gitconfig`).
const std::vector<PrefixConfigName>& prefix_config_names();

/// Most versions listed in one versions directory (installed_versions()); a home with more is
/// not a home a person keeps.
inline constexpr std::size_t kMaxInstalledVersions = 256;

/// The install prefixes that version managers keep in the home, one per installed version:
/// `<nvm>/versions/node/*` and `versions/io.js/*`, `<pyenv>/versions/*`, `<asdf>/installs/*/*`,
/// `<mise>/installs/*/*`, `<volta>/tools/image/node/*` (each manager's root from `toolchain_env`
/// (`NVM_DIR`, `PYENV_ROOT`, `ASDF_DATA_DIR`, `MISE_DATA_DIR`, `VOLTA_HOME`) or its default place
/// under `home`). Reads directory names (the one function here that touches the system); a
/// directory that cannot be listed gives nothing; at most kMaxInstalledVersions per directory;
/// symlinks to directories included (pyenv-virtualenv's environments); sorted.
std::vector<fs::path> installed_versions(
    const fs::path& home, const std::vector<std::pair<std::string, fs::path>>& toolchain_env);

/// The prefix configuration files a command could read in `policy` (pure): for each install
/// prefix inside the home (the parent of each `$PATH` entry in `path_dirs`, `$VIRTUAL_ENV` of
/// `toolchain_env`, each of `versions`), each row of prefix_config_names(), when the prefix is
/// shown: covered by a re-exposed directory of policy.home_read_allowed, or in a workspace that
/// is or contains the home. Absolute, lexically normal, without duplicates, none already in
/// policy.sanitized.
std::vector<SanitizedCopy> prefix_config_copies(
    const SandboxPolicy& policy, const std::vector<fs::path>& path_dirs,
    const std::vector<std::pair<std::string, fs::path>>& toolchain_env,
    const std::vector<fs::path>& versions);

}  // namespace pisandbox::policy
