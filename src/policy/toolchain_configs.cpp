#include "policy/toolchain_configs.hpp"

#include <algorithm>
#include <array>
#include <system_error>

namespace pisandbox::policy {

namespace {

/// A version manager's directory of installed versions: `root` from `variable` or else
/// `default_root` under the home; `levels` directory levels below `versions` are prefixes (1:
/// `versions/<v>`, 2: `installs/<tool>/<v>`).
struct VersionsDir {
  std::string_view variable;
  std::string_view default_root;
  std::string_view versions;
  int levels;
};

constexpr std::array<VersionsDir, 6> kVersionsDirs = {{
    {"NVM_DIR", ".nvm", "versions/node", 1},
    {"NVM_DIR", ".nvm", "versions/io.js", 1},
    {"PYENV_ROOT", ".pyenv", "versions", 1},
    {"ASDF_DATA_DIR", ".asdf", "installs", 2},
    {"MISE_DATA_DIR", ".local/share/mise", "installs", 2},
    {"VOLTA_HOME", ".volta", "tools/image/node", 1},
}};

const fs::path* variable(const std::vector<std::pair<std::string, fs::path>>& env,
                         std::string_view name) {
  for (const auto& [key, value] : env)
    if (key == name && value.is_absolute()) return &value;
  return nullptr;
}

/// The directories directly in `dir` (symlinks to directories included), at most
/// kMaxInstalledVersions.
std::vector<fs::path> subdirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code error;
  for (fs::directory_iterator it(dir, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    if (out.size() >= kMaxInstalledVersions) break;
    std::error_code kind_error;
    if (it->is_directory(kind_error)) out.push_back(it->path());
  }
  return out;
}

}  // namespace

const std::vector<PrefixConfigName>& prefix_config_names() {
  using F = ConfigFormat;
  static const std::vector<PrefixConfigName> rows = {
      {"etc/npmrc", F::Npmrc, "npm (global config, `npm config set --location=global`)",
       "as `~/.npmrc`"},
      {"lib/node_modules/npm/npmrc", F::Npmrc, "npm (builtin config)", "as `~/.npmrc`"},
      {"pip.conf", F::PipConf, "pip (site config of a virtual environment or an interpreter)",
       "the `user:password@` of every URL"},
      {"etc/gitconfig", F::GitConfig, "git installed under the prefix (system config)",
       "as `~/.gitconfig`"},
  };
  return rows;
}

std::vector<fs::path> installed_versions(
    const fs::path& home, const std::vector<std::pair<std::string, fs::path>>& toolchain_env) {
  std::vector<fs::path> out;
  if (home.empty() || home == "/") return out;
  for (const auto& dir : kVersionsDirs) {
    const fs::path* moved = variable(toolchain_env, dir.variable);
    std::vector<fs::path> level = {(moved != nullptr ? *moved : home / dir.default_root) /
                                   dir.versions};
    for (int i = 0; i < dir.levels; ++i) {
      std::vector<fs::path> next;
      for (const auto& parent : level)
        for (auto& child : subdirectories(parent)) next.push_back(std::move(child));
      level = std::move(next);
    }
    for (auto& prefix : level) out.push_back(prefix.lexically_normal());
  }
  std::ranges::sort(out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<SanitizedCopy> prefix_config_copies(
    const SandboxPolicy& policy, const std::vector<fs::path>& path_dirs,
    const std::vector<std::pair<std::string, fs::path>>& toolchain_env,
    const std::vector<fs::path>& versions) {
  std::vector<fs::path> prefixes;
  for (const auto& dir : path_dirs) prefixes.push_back(dir.lexically_normal().parent_path());
  if (const fs::path* venv = variable(toolchain_env, "VIRTUAL_ENV")) prefixes.push_back(*venv);
  prefixes.insert(prefixes.end(), versions.begin(), versions.end());
  // A prefix is shown where a command reads it: under a re-exposed directory of the hidden
  // home, or anywhere in a home that the workspace is or contains.
  const auto shown = [&](const fs::path& file) {
    if (!policy.hide_home) return is_within(policy.home, policy.workspace);
    return std::ranges::any_of(policy.home_read_allowed,
                               [&](const Exposure& e) { return is_within(file, e.path); });
  };
  std::vector<SanitizedCopy> out;
  for (const auto& raw : prefixes) {
    const fs::path prefix = raw.lexically_normal();
    if (!prefix.is_absolute() || policy.home.empty() || policy.home == "/" ||
        !is_within(prefix, policy.home))
      continue;
    for (const auto& row : prefix_config_names()) {
      SanitizedCopy copy{(prefix / row.name).lexically_normal(), row.format};
      if (!shown(copy.path)) continue;
      const auto same = [&](const SanitizedCopy& c) { return c.path == copy.path; };
      if (std::ranges::any_of(out, same) || std::ranges::any_of(policy.sanitized, same)) continue;
      out.push_back(std::move(copy));
    }
  }
  return out;
}

}  // namespace pisandbox::policy
