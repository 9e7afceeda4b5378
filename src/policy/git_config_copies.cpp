#include "policy/git_config_copies.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "core/io.hpp"
#include "policy/git_config_guard.hpp"

namespace pisandbox::policy {

namespace {

/// Whether `file` lies in a credential of the home (credential_names()): never shown, not even
/// as a copy, wherever an include names it (docs/security.md, "Credentials").
bool in_credential(const SandboxPolicy& policy, const fs::path& file) {
  return std::ranges::any_of(credential_names(), [&](const CredentialName& row) {
    return is_within(file, (policy.home / row.name).lexically_normal());
  });
}

/// Whether `file` gets a copy in `policy`: in the hidden home, under a re-exposed directory or
/// where nothing shows it (an included file is the user's git configuration as `~/.gitconfig`
/// is, and the copy stands in the hidden home's own tmpfs), but not in the workspace or another
/// writable root, where the file is the command's own; anywhere in a home that the workspace is
/// or contains; never in a credential.
bool shown(const SandboxPolicy& policy, const fs::path& file) {
  if (in_credential(policy, file)) return false;
  if (!policy.hide_home) return is_within(policy.home, policy.workspace);
  const auto under = [&](const Exposure& e) { return is_within(file, e.path); };
  return std::ranges::any_of(policy.home_read_allowed, under) ||
         std::ranges::none_of(policy.writable, under);
}

/// The text of the regular file `file` (symlinks followed), empty when it is not one, cannot be
/// read or holds more than kMaxConfigBytes. Opened without blocking and checked on the
/// descriptor: an include may name a FIFO, whose open would wait for a writer.
std::string read_bounded(const fs::path& file) {
  std::string text = core::read_regular_head(file.c_str(), kMaxConfigBytes + 1);
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
