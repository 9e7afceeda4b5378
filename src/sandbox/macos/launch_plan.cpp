// The sandbox-exec invocation (launch_plan.hpp).
#include "sandbox/macos/launch_plan.hpp"

#include <string_view>
#include <system_error>

namespace pisandbox::sandbox::macos {

namespace {

bool names(std::string_view entry, std::string_view name) {
  return entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=';
}

}  // namespace

LaunchPlan plan_launch(const std::string& profile, const std::vector<std::string>& argv,
                       const std::vector<std::string>& env, const SeatbeltInputs& inputs,
                       HomeLayer home) {
  LaunchPlan plan;
  plan.argv = {std::string(kSandboxExec), "-p", profile, "--"};
  plan.argv.insert(plan.argv.end(), argv.begin(), argv.end());
  // TMP and TEMP as well (compatibility C24: on Linux all three are the private /tmp, which
  // macOS has not: its /tmp is the host's, and the profile refuses it).
  std::vector<std::pair<std::string_view, std::string>> set = {{"TMPDIR", inputs.temp_dir.string()},
                                                               {"TMP", inputs.temp_dir.string()},
                                                               {"TEMP", inputs.temp_dir.string()}};
  if (home == HomeLayer::Home) set.emplace_back("HOME", inputs.home_layer.string());
  for (const auto& entry : env) {
    bool replaced = false;
    for (const auto& [name, value] : set) replaced = replaced || names(entry, name);
    if (!replaced) plan.env.push_back(entry);
  }
  for (const auto& [name, value] : set) plan.env.push_back(std::string(name) + "=" + value);
  return plan;
}

std::vector<HomeLink> plan_home_links(const policy::SandboxPolicy& policy,
                                      const SeatbeltInputs& inputs) {
  std::vector<HomeLink> links;
  if (!policy.hide_home) return links;
  const auto add = [&](const fs::path& target) {
    if (!policy::is_within(target, policy.home) || target == policy.home) return;
    for (const auto& l : links)
      if (policy::is_within(target, l.target)) return;
    links.push_back({inputs.home_layer / target.lexically_relative(policy.home), target});
  };
  for (const auto& e : policy.home_read_allowed) add(e.path);
  for (const auto& e : policy.writable) add(e.path);
  return links;
}

core::Result<void> make_home_links(const std::vector<HomeLink>& links) {
  for (const auto& l : links) {
    std::error_code error;
    fs::create_directories(l.link.parent_path(), error);
    if (error)
      return core::fail("create_directories(" + l.link.parent_path().string() +
                        "): " + error.message());
    fs::create_symlink(l.target, l.link, error);
    if (error) return core::fail("create_symlink(" + l.link.string() + "): " + error.message());
  }
  return {};
}

int exit_status(const Ending& ending) {
  return ending.exited ? ending.status : 128 + ending.status;
}

}  // namespace pisandbox::sandbox::macos
