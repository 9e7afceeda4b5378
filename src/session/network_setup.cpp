#include "session/network_setup.hpp"

#include <sys/resource.h>

#include <array>
#include <span>

#include "proxy/protocol/destination.hpp"
#include "session/approval_setup.hpp"

namespace pisandbox::session {

namespace {

constexpr std::string_view kHttpProxy = "http://127.0.0.1:3128";
constexpr std::string_view kSocksProxy = "socks5h://127.0.0.1:1080";

constexpr std::array<std::string_view, 11> kHttpProxyVariables = {"HTTP_PROXY",
                                                                  "HTTPS_PROXY",
                                                                  "http_proxy",
                                                                  "https_proxy",
                                                                  "GRPC_PROXY",
                                                                  "grpc_proxy",
                                                                  "npm_config_proxy",
                                                                  "npm_config_https_proxy",
                                                                  "DOCKER_HTTP_PROXY",
                                                                  "DOCKER_HTTPS_PROXY",
                                                                  "GLOBAL_AGENT_HTTP_PROXY"};
constexpr std::array<std::string_view, 4> kSocksProxyVariables = {"ALL_PROXY", "all_proxy",
                                                                  "FTP_PROXY", "ftp_proxy"};
constexpr std::array<std::string_view, 9> kOtherVariables = {"NO_PROXY",
                                                             "no_proxy",
                                                             "RSYNC_PROXY",
                                                             "NODE_USE_ENV_PROXY",
                                                             "CLOUDSDK_PROXY_TYPE",
                                                             "CLOUDSDK_PROXY_ADDRESS",
                                                             "CLOUDSDK_PROXY_PORT",
                                                             "GIT_SSH_COMMAND",
                                                             "npm_config_noproxy"};

/// Quotes `text` for a POSIX shell (ssh runs ProxyCommand with the user's shell).
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::vector<std::string> proxy_environment(const std::filesystem::path& self_exe) {
  std::vector<std::string> env;
  for (auto name : kHttpProxyVariables)
    env.push_back(std::string(name) + "=" + std::string(kHttpProxy));
  for (auto name : kSocksProxyVariables)
    env.push_back(std::string(name) + "=" + std::string(kSocksProxy));
  env.emplace_back("NO_PROXY=localhost,127.0.0.1,::1");
  env.emplace_back("no_proxy=localhost,127.0.0.1,::1");
  env.emplace_back("npm_config_noproxy=localhost,127.0.0.1,::1");
  env.emplace_back("RSYNC_PROXY=127.0.0.1:3128");
  env.emplace_back("NODE_USE_ENV_PROXY=1");
  env.emplace_back("CLOUDSDK_PROXY_TYPE=http");
  env.emplace_back("CLOUDSDK_PROXY_ADDRESS=127.0.0.1");
  env.emplace_back("CLOUDSDK_PROXY_PORT=3128");
  // The ProxyCommand is parsed by ssh's shell: the path is quoted, and inside the quoted
  // -o argument ssh's own %h %p expansion gives the host and port.
  env.push_back(
      "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o "
      "ProxyCommand=" +
      shell_quote(shell_quote(self_exe.string()) + " proxy-connect %h %p"));
  return env;
}

bool is_proxy_variable(std::string_view name) {
  for (const auto& list : {std::span<const std::string_view>(kHttpProxyVariables),
                           std::span<const std::string_view>(kSocksProxyVariables),
                           std::span<const std::string_view>(kOtherVariables)})
    for (auto known : list)
      if (known == name) return true;
  return false;
}

NetworkDecider::NetworkDecider(config::NetworkConfig network, approval::Broker& broker,
                               std::shared_ptr<void> keep_alive, NetworkCommand command,
                               std::function<void(const std::string&)> log,
                               std::function<void(const std::string&, const std::string&)> denied)
    : network_(std::move(network)),
      broker_(broker),
      keep_alive_(std::move(keep_alive)),
      command_(std::move(command)),
      log_(std::move(log)),
      denied_(std::move(denied)) {}

proxy::Decision NetworkDecider::refuse(const std::string& destination, std::string reason) {
  if (log_) log_("network: refused " + destination + ": " + reason);
  if (denied_) denied_(destination, reason);
  return proxy::Decision{false, std::move(reason)};
}

proxy::Decision NetworkDecider::decide(const std::string& raw_host, std::uint16_t port) {
  const std::string port_text = std::to_string(port);
  auto host = proxy::normalise_host(raw_host);
  if (!host) return refuse(raw_host + ":" + port_text, "the host " + host.error());
  const std::string destination = *host + ":" + port_text;
  for (const auto& pattern : network_.denied_domains)
    if (pattern.matches(*host, port))
      return refuse(destination, "matches network.deniedDomains entry " + pattern.text());
  for (const auto& pattern : network_.allowed_domains)
    if (pattern.matches(*host, port)) return proxy::Decision{true, {}};
  {
    std::lock_guard lock(mutex_);
    if (allowed_for_command_.contains(destination)) return proxy::Decision{true, {}};
  }
  approval::BoundaryRequest request;
  request.id = new_id("sandbox-runtime-network-");
  request.source = "sandbox-runtime";
  request.surface = approval::Surface::Network;
  request.operation = "connect";
  request.cwd = command_.cwd;
  request.command = command_.command;
  request.destination = destination;
  request.agent_name = command_.agent_name;
  approval::ApprovalContext context{command_.session_id, command_.scope_key, "", true};
  const approval::ApprovalResult result = broker_.approve(request, context);
  if (result.action != approval::Action::Allow) return refuse(destination, result.reason);
  if (result.for_command) {
    std::lock_guard lock(mutex_);
    allowed_for_command_.insert(destination);
  }
  return proxy::Decision{true, {}};
}

sandbox::ProxyStarter proxy_starter(std::shared_ptr<NetworkDecider> decider,
                                    std::function<void(std::string_view)> log) {
  return [decider = std::move(decider),
          log = std::move(log)](sandbox::ProxyListeners listeners) -> std::shared_ptr<void> {
    // Each tunnel holds two descriptors in the supervisor: lift the soft limit (often 1024)
    // to the hard one. The sandbox was cloned before this, so the command keeps its own.
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      (void)::setrlimit(RLIMIT_NOFILE, &files);
    }
    proxy::ServerOptions options;
    for (auto& fd : listeners.http) options.http_listeners.push_back(fd.release());
    for (auto& fd : listeners.socks) options.socks_listeners.push_back(fd.release());
    options.decide = [decider](const std::string& host, std::uint16_t port) {
      return decider->decide(host, port);
    };
    options.log = log;
    options.refused = [decider](const std::string& destination, const std::string& reason) {
      (void)decider->refuse(destination, reason);
    };
    auto server = std::make_shared<proxy::Server>(std::move(options));
    server->start();
    // The decider outlives every decision: the handle keeps both.
    struct Running {
      std::shared_ptr<NetworkDecider> decider;
      std::shared_ptr<proxy::Server> server;
      ~Running() {
        if (server) server->stop();
      }
    };
    auto running = std::make_shared<Running>();
    running->decider = decider;
    running->server = std::move(server);
    return running;
  };
}

}  // namespace pisandbox::session
