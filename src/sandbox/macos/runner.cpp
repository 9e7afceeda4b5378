// One command on macOS (runner.hpp): the steps of run_sandboxed(), in its order.
#include "sandbox/macos/runner.hpp"

#include <cstdlib>
#include <exception>
#include <optional>
#include <string_view>

#include "policy/protected_scan.hpp"
#include "policy/proxy_environment.hpp"
#include "proxy/protocol/credential.hpp"
#include "sandbox/macos/launcher.hpp"
#include "sandbox/macos/loopback.hpp"
#include "sandbox/macos/seatbelt.hpp"

namespace pisandbox::sandbox::macos {

namespace {

constexpr std::string_view kJavaToolOptions = "JAVA_TOOL_OPTIONS";

Outcome launch_failed(const std::string& step, const core::Error& error) {
  return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, step + ": " + error.describe()});
}

/// The proxy's listeners on the host's loopback and the credential its clients must present.
struct LoopbackProxy {
  LoopbackListener http;
  LoopbackListener socks;
  proxy::ProxyCredential credential;
};

/// Both listeners (HTTP, then SOCKS5) and a fresh credential. Errors: the listener's call, or
/// `generate_credential(): <what>` when the random source fails.
core::Result<LoopbackProxy> open_proxy() {
  LoopbackProxy out;
  auto http = open_loopback_listener();
  if (!http) return std::unexpected(http.error());
  auto socks = open_loopback_listener();
  if (!socks) return std::unexpected(socks.error());
  out.http = std::move(*http);
  out.socks = std::move(*socks);
  try {
    out.credential = proxy::generate_credential();
  } catch (const std::exception& e) {
    return core::fail(std::string("generate_credential(): ") + e.what());
  }
  return out;
}

/// Starts `options.proxy` on both listeners with the credential (they are the proxy's from
/// then on). Without a proxy nothing happens: the listeners stay with `loopback`, open and never
/// accepted. Errors: what the starter threw (a thread that could not be created).
core::Result<std::shared_ptr<void>> start_proxy(const RunOptions& options,
                                                LoopbackProxy& loopback) {
  if (!options.proxy) return nullptr;
  ProxyListeners listeners;
  listeners.http.push_back(std::move(loopback.http.fd));
  listeners.socks.push_back(std::move(loopback.socks.fd));
  listeners.username = loopback.credential.username;
  listeners.password = loopback.credential.password;
  try {
    return options.proxy(std::move(listeners));
  } catch (const std::exception& e) {
    return core::fail(e.what());
  }
}

std::string_view name_of(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

/// The caller's part of a JAVA_TOOL_OPTIONS that policy::command_environment() merged with the
/// Linux proxy options (`<caller's> <java_proxy_options({})>`, or those alone): nullopt when
/// there is none.
std::optional<std::string> caller_java_options(std::string_view value) {
  const std::string linux_options = policy::java_proxy_options({});
  if (value == linux_options) return std::nullopt;
  if (value.ends_with(" " + linux_options)) value.remove_suffix(linux_options.size() + 1);
  return std::string(value);
}

/// pi-sandbox's own path, as the policy protects it (the SSH ProxyCommand runs it).
std::filesystem::path self_executable(const policy::SandboxPolicy& policy) {
  for (const auto& p : policy.protected_paths)
    if (p.reason == policy::ProtectReason::SandboxBinary) return p.path;
  return "pi-sandbox";
}

/// `env` less its proxy variables, then those of the command's own proxy (step 5).
std::vector<std::string> with_proxy_environment(const std::vector<std::string>& env,
                                                const policy::SandboxPolicy& policy,
                                                const policy::ProxyEndpoints& endpoints) {
  std::vector<std::string> out;
  std::optional<std::string> java_options;
  for (const auto& entry : env) {
    const std::string_view name = name_of(entry);
    if (name == kJavaToolOptions && entry.size() > name.size())
      java_options = caller_java_options(std::string_view(entry).substr(name.size() + 1));
    if (!policy::is_proxy_variable(name)) out.push_back(entry);
  }
  for (auto& variable : policy::proxy_environment(self_executable(policy), java_options, endpoints))
    out.push_back(std::move(variable));
  return out;
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
  auto loopback = open_proxy();
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
  if (auto line = policy::home_workspace_warning(policy); !line.empty()) warn("warning: " + line);
  for (const auto& link : scan.credential_links)
    warn("warning: " + policy::credential_link_warning(link));
  auto running = start_proxy(options, *loopback);
  if (!running) return launch_failed("the proxy", running.error());
  Outcome outcome = launch(plan, command.cwd, options);
  running->reset();  // the command is gone: stop the proxy and close its connections
  return outcome;    // the private directories go with `dirs`
}

}  // namespace pisandbox::sandbox::macos
