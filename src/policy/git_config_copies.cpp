#include "policy/git_config_copies.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include "policy/git_config_guard.hpp"

namespace pisandbox::policy {

namespace {

/// Whether a command could read `file` in `policy`: under a re-exposed directory of the hidden
/// home, or anywhere in a home that the workspace is or contains.
bool shown(const SandboxPolicy& policy, const fs::path& file) {
  if (!policy.hide_home) return is_within(policy.home, policy.workspace);
  return std::ranges::any_of(policy.home_read_allowed,
                             [&](const Exposure& e) { return is_within(file, e.path); });
}

std::string read_bounded(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::string text;
  text.resize(kMaxConfigBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text.size() > kMaxConfigBytes ? std::string() : text;
}

}  // namespace

std::vector<fs::path> git_include_paths(std::string_view text, const fs::path& file,
                                        const fs::path& home) {
  std::vector<fs::path> out;
  const GitConfigScan scan = read_git_config(text);
  if (scan.malformed) return out;
  for (const auto& entry : scan.findings) {
    const bool include = entry.key == "include.path" ||
                         (entry.key.starts_with("includeif.") && entry.key.ends_with(".path"));
    if (!include || entry.value.empty()) continue;
    fs::path path;
    if (entry.value.starts_with("~/"))
      path = home / entry.value.substr(2);
    else if (entry.value.front() == '/')
      path = entry.value;
    else if (entry.value.front() != '~')
      path = file.parent_path() / entry.value;
    else
      continue;  // `~user/`: another user's home
    out.push_back(path.lexically_normal());
  }
  return out;
}

std::vector<fs::path> git_config_closure(const std::vector<fs::path>& files, const fs::path& home) {
  std::vector<fs::path> out;
  std::vector<fs::path> level = files;
  for (int depth = 0; depth <= kMaxGitIncludeDepth && !level.empty(); ++depth) {
    std::vector<fs::path> next;
    for (const auto& file : level) {
      if (out.size() >= kMaxGitConfigFiles) return out;
      const fs::path normal = file.lexically_normal();
      if (std::ranges::find(out, normal) != out.end()) continue;
      out.push_back(normal);
      std::ranges::copy(git_include_paths(read_bounded(normal), normal, home),
                        std::back_inserter(next));
    }
    level = std::move(next);
  }
  return out;
}

std::vector<SanitizedCopy> git_config_copies(const SandboxPolicy& policy,
                                             const std::vector<fs::path>& files) {
  std::vector<SanitizedCopy> out;
  if (policy.home.empty() || policy.home == "/") return out;
  for (const auto& file : files) {
    SanitizedCopy copy{file.lexically_normal(), ConfigFormat::GitConfig};
    if (!copy.path.is_absolute() || !is_within(copy.path, policy.home) || !shown(policy, copy.path))
      continue;
    const auto same = [&](const SanitizedCopy& c) { return c.path == copy.path; };
    if (std::ranges::any_of(out, same) || std::ranges::any_of(policy.sanitized, same)) continue;
    out.push_back(std::move(copy));
  }
  return out;
}

}  // namespace pisandbox::policy
