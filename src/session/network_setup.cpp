#include "session/network_setup.hpp"

#include <sys/resource.h>

#include "proxy/protocol/destination.hpp"
#include "session/approval_setup.hpp"

namespace pisandbox::session {

NetworkDecider::NetworkDecider(
    config::NetworkConfig network, approval::Broker& broker, std::shared_ptr<void> keep_alive,
    NetworkCommand command, std::function<void(const std::string&)> log,
    std::function<void(const std::string&, const std::string&, std::string_view, std::string_view)>
        denied)
    : network_(std::move(network)),
      broker_(broker),
      keep_alive_(std::move(keep_alive)),
      command_(std::move(command)),
      log_(std::move(log)),
      denied_(std::move(denied)) {}

proxy::Decision NetworkDecider::refuse(const std::string& destination, std::string reason,
                                       std::string_view source, std::string_view recovery) {
  if (log_) log_("network: refused " + destination + ": " + reason);
  if (denied_) denied_(destination, reason, source, recovery);
  return proxy::Decision{false, std::move(reason)};
}

void NetworkDecider::failed(const std::string& destination, const std::string& cause) {
  if (log_) log_("network: " + destination + ": " + cause);
}

void NetworkDecider::capped(std::size_t max_connections, int descriptor_ceiling) {
  if (log_)
    log_("network: closed connections past " + std::to_string(max_connections) +
         " open at once (or at descriptor " + std::to_string(descriptor_ceiling) +
         "), each at once: pi-sandbox keeps the rest of its descriptors for the guard, the "
         "approvals and the audit log");
}

std::string NetworkDecider::denied_reason(const policy::DomainPattern& pattern) const {
  std::string out = "matches network.deniedDomains entry " + pattern.text();
  const auto reason = network_.denied_domain_reasons.find(pattern.text());
  if (reason != network_.denied_domain_reasons.end()) out += ": " + reason->second;
  return out;
}

std::optional<std::string> NetworkDecider::screen(const std::string& raw_host, std::uint16_t port) {
  const std::string port_text = std::to_string(port);
  auto host = proxy::normalise_host(raw_host);
  if (!host) return refuse(raw_host + ":" + port_text, "the host " + host.error()).reason;
  for (const auto& pattern : network_.denied_domains)
    if (pattern.matches(*host, port))
      return refuse(*host + ":" + port_text, denied_reason(pattern)).reason;
  return std::nullopt;
}

std::optional<proxy::Decision> NetworkDecider::decide_at_once(const std::string& raw_host,
                                                              std::uint16_t port) {
  auto host = proxy::normalise_host(raw_host);
  if (!host) return std::nullopt;
  for (const auto& pattern : network_.denied_domains)
    if (pattern.matches(*host, port)) return std::nullopt;
  for (const auto& pattern : network_.allowed_domains)
    if (pattern.matches(*host, port)) {
      std::lock_guard lock(reached_mutex_);
      reached_.insert(*host + ":" + std::to_string(port));
      return proxy::Decision{true, {}, "network.allowedDomains " + pattern.text()};
    }
  return std::nullopt;
}

proxy::Decision NetworkDecider::decide(const std::string& raw_host, std::uint16_t port) {
  const std::string port_text = std::to_string(port);
  auto host = proxy::normalise_host(raw_host);
  if (!host) return refuse(raw_host + ":" + port_text, "the host " + host.error());
  const std::string destination = *host + ":" + port_text;
  // screen() has refused these before the lookup; checked again so that a caller without the
  // screen still never lets a denied name pass (fail closed).
  for (const auto& pattern : network_.denied_domains)
    if (pattern.matches(*host, port)) return refuse(destination, denied_reason(pattern));
  const auto allow = [this, &destination](std::string grant) {
    std::lock_guard lock(reached_mutex_);
    reached_.insert(destination);
    return proxy::Decision{true, {}, std::move(grant)};
  };
  for (const auto& pattern : network_.allowed_domains)
    if (pattern.matches(*host, port)) return allow("network.allowedDomains " + pattern.text());
  approval::BoundaryRequest request;
  request.id = new_id("sandbox-runtime-network-");
  request.source = "sandbox-runtime";
  request.surface = approval::Surface::Network;
  request.operation = "connect";
  request.cwd = command_.cwd;
  request.command = command_.command;
  request.destination = destination;
  request.agent_name = command_.agent_name;
  // The broker answers from the command's and the session's remembered answers first.
  approval::ApprovalContext context{command_.session_id, command_.scope_key, "", true};
  const approval::ApprovalResult result = broker_.approve(request, context);
  if (result.action != approval::Action::Allow)
    return refuse(destination, result.reason, approval::to_string(result.source),
                  approval::to_string(result.recovery));
  return allow({});
}

bool NetworkDecider::reached(const std::string& host, std::uint16_t port) const {
  std::lock_guard lock(reached_mutex_);
  return reached_.contains(host + ":" + std::to_string(port));
}

sandbox::ProxyStarter proxy_starter(std::shared_ptr<NetworkDecider> decider,
                                    std::function<void(std::string_view)> log,
                                    proxy::ParentProxies parents, proxy::HostService host_service) {
  return [decider = std::move(decider), log = std::move(log), parents = std::move(parents),
          host_service =
              std::move(host_service)](sandbox::ProxyListeners listeners) -> std::shared_ptr<void> {
    // Each tunnel holds two descriptors in the supervisor: lift the soft limit (often 1024)
    // to the hard one. The sandbox was cloned before this, so the command keeps its own.
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      (void)::setrlimit(RLIMIT_NOFILE, &files);
    }
    proxy::ServerOptions options;
    // The proxy refuses connections past a cap that keeps descriptors for the guard, the
    // broker and the audit log (docs/security.md, "The guard": fail closed).
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
      const proxy::ConnectionCap cap = proxy::connection_cap(files.rlim_cur);
      options.max_connections = cap.max_connections;
      options.descriptor_ceiling = cap.descriptor_ceiling;
    }
    options.capped = [decider](std::size_t max_connections, int descriptor_ceiling) {
      decider->capped(max_connections, descriptor_ceiling);
    };
    for (auto& fd : listeners.http) options.http_listeners.push_back(fd.release());
    for (auto& fd : listeners.socks) options.socks_listeners.push_back(fd.release());
    if (!listeners.username.empty() || !listeners.password.empty())
      options.credential = proxy::ProxyCredential{listeners.username, listeners.password};
    options.screen = [decider](const std::string& host, std::uint16_t port) {
      return decider->screen(host, port);
    };
    options.decide = [decider](const std::string& host, std::uint16_t port) {
      return decider->decide(host, port);
    };
    options.decide_at_once = [decider](const std::string& host, std::uint16_t port) {
      return decider->decide_at_once(host, port);
    };
    options.log = log;
    // No limit of the proxy's own on a decision (0 = none): a decision ends by
    // itself, at the reviewer's timeout, the question's deadline (approval.questionTimeout-
    // Seconds or the command's timeout) or the command's end.
    options.decision_timeout = std::chrono::seconds(0);
    options.refused = [decider](const std::string& destination, const std::string& reason) {
      (void)decider->refuse(destination, reason);
    };
    options.parents = parents;
    options.host_service = host_service;
    options.unreachable = [decider](const std::string& destination, const std::string& cause) {
      decider->failed(destination, cause);
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
