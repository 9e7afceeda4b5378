// One command on macOS (runner.hpp): the steps of run_sandboxed(), in its order.
#include "sandbox/macos/runner.hpp"

#include <cstdlib>

#include "policy/protected_scan.hpp"
#include "sandbox/macos/launcher.hpp"
#include "sandbox/macos/loopback.hpp"
#include "sandbox/macos/seatbelt.hpp"

namespace pisandbox::sandbox::macos {

namespace {

Outcome launch_failed(const std::string& step, const core::Error& error) {
  return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, step + ": " + error.describe()});
}

/// `sockets` less those inside a path the command may write (where it could bind its own).
std::vector<std::filesystem::path> usable_sockets(const std::vector<std::filesystem::path>& sockets,
                                                  const policy::SandboxPolicy& policy) {
  std::vector<std::filesystem::path> out;
  for (const auto& socket : sockets) {
    bool writable = false;
    for (const auto& e : policy.writable) writable = writable || policy::is_within(socket, e.path);
    for (const auto& entry : policy.home_writable_entries)
      writable = writable || policy::is_within(socket, entry);
    if (!writable) out.push_back(socket);
  }
  return out;
}

}  // namespace

std::filesystem::path private_dirs_parent() {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir != nullptr && tmpdir[0] == '/') return tmpdir;
  return "/tmp";
}

Outcome run_sandboxed(const policy::SandboxPolicy& policy, Command command,
                      const RunOptions& options, const WarningSink& warn,
                      const RunnerOverrides& overrides) {
  if (command.argv.empty()) return launch_failed("the command", core::Error{"empty argv", "", 0});
  auto dirs = make_private_dirs(private_dirs_parent());
  if (!dirs) return launch_failed("private directories", dirs.error());
  auto loopback = open_loopback_proxy();
  if (!loopback) return launch_failed("the proxy's listeners and credential", loopback.error());
  SeatbeltInputs inputs{dirs->temp_dir(), dirs->home_layer(), loopback->http.port,
                        loopback->socks.port, usable_sockets(overrides.allowed_sockets, policy)};
  const policy::ScanResult scan = policy::scan_writable_roots(policy, policy::scan_options(policy));
  const auto protected_paths =
      policy::merge_protected(policy.protected_paths, scan.protected_paths);
  // A credential's other names are denied as the credential is (docs/security.md, "Hard links
  // and binds of a credential").
  policy::SandboxPolicy masked = policy;
  for (const auto& link : scan.credential_links) masked.concealed.push_back(link.path);
  const std::string profile =
      render(plan_seatbelt(masked, protected_paths, inputs, host_path_exists));
  if (auto linked = make_home_links(plan_home_links(policy, inputs)); !linked)
    return launch_failed("the home layer", linked.error());
  const policy::ProxyEndpoints endpoints{inputs.http_port, inputs.socks_port,
                                         proxy::userinfo(loopback->credential)};
  LaunchPlan plan =
      plan_launch(profile, command.argv, with_proxy_environment(command.env, policy, endpoints),
                  inputs, policy.hide_home ? HomeLayer::Home : HomeLayer::Keep);
  plan.argv[0] = overrides.sandbox_exec;
  if (auto line = policy::home_workspace_warning(policy);
      !line.empty() && (!options.say_home_workspace || options.say_home_workspace()))
    warn("warning: " + line);
  for (const auto& link : scan.credential_links)
    warn("warning: " + policy::credential_link_warning(link));
  auto running = start_loopback_proxy(options, *loopback);
  if (!running) return launch_failed("the proxy", running.error());
  Outcome outcome = launch(plan, command.cwd, options);
  running->reset();  // the command is gone: stop the proxy and close its connections
  return outcome;    // the private directories go with `dirs`
}

}  // namespace pisandbox::sandbox::macos
