// The sandbox-exec invocation (launch_plan.hpp).
#include "sandbox/macos/launch_plan.hpp"

#include <string_view>

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
  std::vector<std::pair<std::string_view, std::string>> set = {
      {"TMPDIR", inputs.temp_dir.string()}};
  if (home == HomeLayer::Home) set.emplace_back("HOME", inputs.home_layer.string());
  for (const auto& entry : env) {
    bool replaced = false;
    for (const auto& [name, value] : set) replaced = replaced || names(entry, name);
    if (!replaced) plan.env.push_back(entry);
  }
  for (const auto& [name, value] : set) plan.env.push_back(std::string(name) + "=" + value);
  return plan;
}

int exit_status(const Ending& ending) {
  return ending.exited ? ending.status : 128 + ending.status;
}

}  // namespace pisandbox::sandbox::macos
