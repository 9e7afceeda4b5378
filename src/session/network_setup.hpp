// pisandbox::session — the network of one command as `run` wires it (the environment that points
// tools at the proxy is policy/proxy_environment.hpp): the decision for each destination, and the
// proxy's start and stop (docs/network.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "approval/broker.hpp"
#include "config/config.hpp"
#include "proxy/server.hpp"
#include "sandbox/command.hpp"

namespace pisandbox::session {

/// What a NetworkDecider needs to know about the command.
///   session_id / scope_key: the broker's session and breaker scope of the command.
///   command: the full command (the request's `command`); cwd: its working directory.
struct NetworkCommand {
  std::string session_id;
  std::string scope_key;
  std::string command;
  std::string cwd;
  std::optional<std::string> agent_name;
};

/// Who refused a destination, as the `denied` callback and serve's `denied` event name it:
/// the broker's sources (`hard-deny`, `reviewer`, `human`, `unavailable`, `invalid-grant`), or
/// `policy` for the configuration and the proxy's own checks (deniedDomains, a host that is not
/// a host name, a name that does not resolve, an address that is not public, no decision in
/// time).
inline constexpr std::string_view kPolicySource = "policy";

/// Decides each destination of one command (docs/network.md, "Deciding a destination";
/// compatibility C31–C36, C41; docs/approvals.md, "The order of a decision"): screen() first
/// (normalise, refused: the normaliser's reason → `network.deniedDomains` match → refuse), then the
/// proxy's name lookup and address check for a direct connection, then decide()
/// (`network.allowedDomains` match → allow → else the broker with a `network`/`connect` request,
/// `destination` = `host:port`, which answers from what the human allowed or denied earlier in the
/// command or the session first and may offer the remembered choices). One approval covers one
/// connection: only an `allowedDomains` match carries a proxy::Decision::grant (the entry), so
/// only what it allowed may be served by a kept upstream connection. Thread-safe: the proxy calls
/// it from several threads at once.
class NetworkDecider {
 public:
  /// `broker` must stay valid as long as `keep_alive` (which the decider holds). `log`
  /// receives one line per refusal; `denied` the destination, the reason, who refused
  /// (kPolicySource or an approval source) and the recovery (refuse(); either callback may be
  /// empty).
  NetworkDecider(config::NetworkConfig network, approval::Broker& broker,
                 std::shared_ptr<void> keep_alive, NetworkCommand command,
                 std::function<void(const std::string&)> log,
                 std::function<void(const std::string&, const std::string&, std::string_view,
                                    std::string_view)>
                     denied);

  /// The proxy's Screen (proxy::ServerOptions::screen): normalises `host` and refuses a
  /// `network.deniedDomains` match, before any name lookup and without asking anyone.
  /// Returns nullopt to go on, or the reason of the refusal it reported (refuse()). Fast and
  /// non-blocking: the proxy runs it on its I/O thread.
  [[nodiscard]] std::optional<std::string> screen(const std::string& host, std::uint16_t port);

  /// The proxy's QuickDecider (proxy::ServerOptions::decide_at_once): decide()'s answer when a
  /// `network.allowedDomains` entry matches (allowed, the entry as its grant), nullopt
  /// otherwise (decide() is then asked: a denied name is refused there, anything else goes to
  /// the broker). An allowed destination counts as reached(), as decide()'s does. A pattern
  /// match: fast and non-blocking, run on the proxy's I/O thread.
  [[nodiscard]] std::optional<proxy::Decision> decide_at_once(const std::string& host,
                                                              std::uint16_t port);

  /// `host` as the client sent it; `port` 1-65535. Called after screen() let the destination
  /// pass (deniedDomains is checked again: a caller without the screen still fails closed).
  [[nodiscard]] proxy::Decision decide(const std::string& host, std::uint16_t port);

  /// Whether decide() has allowed `host:port` (normalised host) for this command: the
  /// destinations a credential may be given for (docs/network.md, "Credentials for HTTPS").
  [[nodiscard]] bool reached(const std::string& host, std::uint16_t port) const;

  /// Reports a refusal (the stderr line and the `denied` callback), for refusals decide()
  /// makes and for those the proxy makes before or after it (an IP literal, an address that
  /// is not public, a name that does not resolve, no decision in time).
  ///   source: who refused (kPolicySource for the proxy's own refusals).
  ///   recovery: the user's override of an automatic denial (`retry`, `break-glass`;
  ///     approval::ApprovalResult::recovery), empty for none.
  proxy::Decision refuse(const std::string& destination, std::string reason,
                         std::string_view source = kPolicySource, std::string_view recovery = {});

  /// Reports an allowed destination that could not be reached, directly or through the parent
  /// proxy (proxy::ServerOptions::unreachable; docs/network.md, "Answers the command sees"):
  /// the line `network: <destination>: <cause>`.
  void failed(const std::string& destination, const std::string& cause);

  /// Reports the proxy's first connection closed past its cap (proxy::ServerOptions::capped;
  /// docs/security.md, "The guard": fail closed): the line `network: closed connections past
  /// <max_connections> open at once (or at descriptor <descriptor_ceiling>) ...`.
  void capped(std::size_t max_connections, int descriptor_ceiling);

 private:
  /// The refusal reason for a `network.deniedDomains` match: `matches network.deniedDomains
  /// entry <pattern>`, followed by `: <reason>` when `network.deniedDomainReasons` gives one
  /// (docs/network.md, "Deciding a destination").
  [[nodiscard]] std::string denied_reason(const policy::DomainPattern& pattern) const;

  config::NetworkConfig network_;
  approval::Broker& broker_;
  std::shared_ptr<void> keep_alive_;
  NetworkCommand command_;
  std::function<void(const std::string&)> log_;
  std::function<void(const std::string&, const std::string&, std::string_view, std::string_view)>
      denied_;
  mutable std::mutex reached_mutex_;
  std::set<std::string, std::less<>> reached_;  // `host:port` decide() or decide_at_once() allowed
};

/// A ProxyStarter that serves the sandbox's listeners with a proxy::Server deciding through
/// `decider` (kept alive as long as the server) and reaching destinations through `parents`
/// (the caller's parent proxies, proxy::parent_proxies_from_environment()). The server's
/// decision_timeout is 0 (no limit): the question's own deadline ends a pending decision.
/// `host_service` answers the requests of pi-sandbox's helper inside
/// (proxy::ServerOptions::host_service; empty: refused).
[[nodiscard]] sandbox::ProxyStarter proxy_starter(std::shared_ptr<NetworkDecider> decider,
                                                  std::function<void(std::string_view)> log,
                                                  proxy::ParentProxies parents = {},
                                                  proxy::HostService host_service = {});

}  // namespace pisandbox::session
