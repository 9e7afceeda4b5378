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

}  // namespace

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
  for (auto& entry : filtered.env) {
    const std::string_view name = name_of(entry);
    if (name == kJavaToolOptions && entry.size() > name.size())
      java_options = entry.substr(name.size() + 1);
    if (std::ranges::find(kOwnVariables, name) != kOwnVariables.end() || is_proxy_variable(name))
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
  return out;
}

std::vector<std::string> sandbox_variable_names() {
  std::vector<std::string> names(kOwnVariables.begin(), kOwnVariables.end());
  for (const auto& entry : proxy_environment("pi-sandbox")) names.emplace_back(name_of(entry));
  return names;
}

}  // namespace pisandbox::policy
