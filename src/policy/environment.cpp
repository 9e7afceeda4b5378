#include "policy/environment.hpp"

#include <algorithm>
#include <optional>

#include "core/ascii.hpp"
#include "policy/proxy_environment.hpp"

namespace pisandbox::policy {

namespace {

constexpr std::string_view kJavaToolOptions = "JAVA_TOOL_OPTIONS";

/// The names command_environment() sets itself besides the proxy's.
constexpr std::array<std::string_view, 5> kOwnVariables = {"TMPDIR", "TMP", "TEMP", "PI_SANDBOX",
                                                           "SANDBOX_RUNTIME"};

std::string_view name_of(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

/// The first entry of `patterns` that matches `name`, if any.
template <typename Patterns>
std::optional<std::string> first_match(const Patterns& patterns, std::string_view name) {
  for (const auto& pattern : patterns)
    if (matches_variable(pattern, name)) return std::string(pattern);
  return std::nullopt;
}

constexpr std::string_view kGitConfigCount = "GIT_CONFIG_COUNT";

/// The caller's entries of git's configuration that git_credential_environment() replaces: the
/// count, and the keys and values at or past it.
bool replaced_git_config(std::string_view name, std::size_t count) {
  if (name == kGitConfigCount) return true;
  for (const std::string_view prefix : {"GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"}) {
    if (!name.starts_with(prefix)) continue;
    const std::string_view index = name.substr(prefix.size());
    if (index.empty() || index.size() > 4 || !std::ranges::all_of(index, core::is_digit))
      return false;
    return std::stoul(std::string(index)) >= count;
  }
  return false;
}

/// `text` quoted for a POSIX shell.
std::string shell_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::size_t git_config_count(std::span<const std::string> env) {
  std::size_t count = 0;
  for (const auto& entry : env) {
    if (name_of(entry) != kGitConfigCount || entry.size() <= kGitConfigCount.size() + 1) continue;
    const std::string_view value = std::string_view(entry).substr(kGitConfigCount.size() + 1);
    count = value.size() <= 4 && std::ranges::all_of(value, core::is_digit)
                ? std::stoul(std::string(value))
                : 0;
  }
  // Every key below the count must be there (git refuses a missing one); the credential
  // filter removes them by default (`*KEY*`), and then none of them is usable.
  for (std::size_t i = 0; i < count; ++i) {
    const std::string key = "GIT_CONFIG_KEY_" + std::to_string(i);
    if (std::ranges::none_of(env, [&key](const std::string& e) { return name_of(e) == key; }))
      return 0;
  }
  return count;
}

std::vector<std::string> git_credential_environment(const std::filesystem::path& self_exe,
                                                    std::size_t first) {
  const std::string a = std::to_string(first);
  const std::string b = std::to_string(first + 1);
  return {std::string(kGitConfigCount) + "=" + std::to_string(first + 2),
          "GIT_CONFIG_KEY_" + a + "=credential.helper", "GIT_CONFIG_VALUE_" + a + "=",
          "GIT_CONFIG_KEY_" + b + "=credential.helper",
          "GIT_CONFIG_VALUE_" + b + "=!" + shell_quoted(self_exe.string()) + " credential-helper"};
}

bool is_variable_pattern(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) {
    return core::is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '*';
  });
}

bool matches_variable(std::string_view pattern, std::string_view name) {
  // Iterative glob with one backtracking point (the last `*`): linear in practice, no
  // recursion whatever the pattern.
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && core::to_lower(pattern[p]) == core::to_lower(name[n])) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

RemovedVariable decide_variable(std::string_view name, const EnvironmentSpec& spec) {
  if (auto rule = first_match(spec.remove, name))
    return {std::string(name), std::move(*rule), RemovalSource::Configuration};
  if (first_match(spec.pass_through, name) || first_match(kDefaultKept, name))
    return {std::string(name), {}, RemovalSource::Default};
  if (auto rule = first_match(kDefaultRemoved, name))
    return {std::string(name), std::move(*rule), RemovalSource::Default};
  return {std::string(name), {}, RemovalSource::Default};
}

CommandEnvironment filter_environment(std::span<const std::string> caller,
                                      const EnvironmentSpec& spec) {
  CommandEnvironment out;
  for (const auto& entry : caller) {
    RemovedVariable decision = decide_variable(name_of(entry), spec);
    if (decision.rule.empty())
      out.env.push_back(entry);
    else
      out.removed.push_back(std::move(decision));
  }
  return out;
}

CommandEnvironment command_environment(std::span<const std::string> caller,
                                       const EnvironmentSpec& spec,
                                       const std::filesystem::path& self_exe) {
  CommandEnvironment filtered = filter_environment(caller, spec);
  CommandEnvironment out;
  out.removed = std::move(filtered.removed);
  std::optional<std::string> java_options;
  const std::size_t git_entries = git_config_count(filtered.env);
  for (auto& entry : filtered.env) {
    const std::string_view name = name_of(entry);
    if (name == kJavaToolOptions && entry.size() > name.size())
      java_options = entry.substr(name.size() + 1);
    if (std::ranges::find(kOwnVariables, name) != kOwnVariables.end() || is_proxy_variable(name) ||
        replaced_git_config(name, git_entries))
      continue;
    out.env.push_back(std::move(entry));
  }
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) out.env.push_back(std::string(name) + "=/tmp");
  out.env.emplace_back("PI_SANDBOX=1");
  // The Sandbox Runtime sets it inside; tools that detect a sandbox by it keep working
  // (docs/compatibility.md, C83).
  out.env.emplace_back("SANDBOX_RUNTIME=1");
  for (auto& variable : proxy_environment(self_exe, java_options))
    out.env.push_back(std::move(variable));
  for (auto& variable : git_credential_environment(self_exe, git_entries))
    out.env.push_back(std::move(variable));
  return out;
}

std::vector<std::string> sandbox_variable_names() {
  std::vector<std::string> names(kOwnVariables.begin(), kOwnVariables.end());
  for (const auto& entry : proxy_environment("pi-sandbox")) names.emplace_back(name_of(entry));
  for (const auto& entry : git_credential_environment("pi-sandbox", 0))
    names.emplace_back(name_of(entry));
  return names;
}

}  // namespace pisandbox::policy
