// pisandbox::proxy::Server — the per-command network proxy: HTTP CONNECT and absolute-form
// HTTP on one set of listeners, SOCKS5 on another; every destination screened, resolved once
// and checked, decided, and connected to exactly as checked (Happy Eyeballs), or decided and
// reached through the parent proxy.
//
// Source: docs/network.md ("Deciding a destination", "Answers the command sees");
// compatibility C31-C48. The server owns the listening sockets it
// is given (created by the sandbox's pid 1 on its own loopback) and runs on an io_context of
// its own, on a thread it creates; the decisions, which may wait for a human, run on other
// threads (WorkerPool), so one pending approval never stalls the other connections.
#pragma once

#include <asio/ip/address.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/address.hpp"
#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/parent_proxy.hpp"

namespace pisandbox::proxy {

/// The answer for one destination. `reason` says why it was refused; it is logged, never sent
/// to the sandboxed client (which gets the fixed 403 / SOCKS reply 0x02).
/// `grant`: for an allowed destination, the standing rule it was allowed under (for example the
/// `network.allowedDomains` entry), the same text each time that rule allows it; empty when the
/// allowance covers this one connection or request only (a one-shot approval). An upstream
/// connection an absolute-form request opened is kept for a later request only when that
/// request is allowed under the same non-empty grant (UpstreamPool).
struct Decision {
  bool allowed = false;
  std::string reason;
  std::string grant;
};

/// Decides one destination (docs/network.md, "Deciding a destination": allowedDomains, then the
/// approval broker). Called once per HTTP CONNECT, per SOCKS5 CONNECT and per absolute-form
/// request, with the normalised host (normalise_host()) and the port (1-65535), after the Screen
/// let it pass and, for a direct connection, after its name resolved to addresses that all passed
/// the AddressFilter (docs/approvals.md, "The order of a decision": what will be refused is
/// refused before anyone is asked).
/// May block for minutes (a human approval); it is called on a worker thread, never on the proxy's
/// I/O thread, and possibly on several threads at once. A call still running when the server stops
/// is not waited for: what the Decider captures must stay valid until it returns (capture shared
/// state by std::shared_ptr). An exception counts as a refusal.
using Decider = std::function<Decision(const std::string& host, std::uint16_t port)>;

/// The reserved name pi-sandbox's own helper inside the sandbox sends its requests to, as an
/// absolute-form `POST http://pi-sandbox.invalid/<service>` through the HTTP proxy: a request
/// for pi-sandbox on the host, never a destination (`.invalid` can never resolve, RFC 2606
/// section 2). docs/network.md, "Credentials for HTTPS"; docs/ARCHITECTURE.md, "The channel of
/// the credential helper".
inline constexpr std::string_view kHostServiceHost = "pi-sandbox.invalid";
/// Most bytes of the body of one such request (a git-credential(1) message).
inline constexpr std::size_t kMaxHostServiceBody = 64 * 1024;

/// pi-sandbox's answer to one request of its helper: `given` → `200 OK`, else `403 Forbidden`;
/// `body` is sent as `text/plain` either way (the credential's lines, or the one line that says
/// why not).
struct HostServiceAnswer {
  bool given = false;
  std::string body;
};

/// Answers one request to kHostServiceHost: `path` is the request's path (`/credential/get`),
/// `body` its whole body (at most kMaxHostServiceBody bytes). Runs on a worker thread and may
/// block for minutes (a human approval, the host's credential helper); what it captures must
/// stay valid until it returns (a std::shared_ptr), as for the Decider. An exception counts as a
/// refusal.
using HostService =
    std::function<HostServiceAnswer(const std::string& path, const std::string& body)>;

/// The fast policy check that runs first for every destination (docs/network.md, "Deciding a
/// destination": network.deniedDomains), before any name lookup and before the Decider, with the
/// normalised host and the port. Returns nullopt to go on, or the reason of a refusal it has
/// reported itself (as the Decider reports its own). Runs on the proxy's I/O thread, so it must
/// not block. An exception counts as a refusal.
using Screen =
    std::function<std::optional<std::string>(const std::string& host, std::uint16_t port)>;

/// The Decider's answer when it needs nobody and nothing that blocks (a pattern match such as
/// `network.allowedDomains`, docs/network.md, "Deciding a destination", step 4), given on the
/// proxy's I/O thread at the point where the Decider would be called, with the same arguments;
/// nullopt: ask the Decider. Must not block. An exception counts as a refusal.
using QuickDecider =
    std::function<std::optional<Decision>(const std::string& host, std::uint16_t port)>;

/// Whether the proxy may connect to one resolved address (docs/network.md, "Deciding a
/// destination"). Returns false with `why_not` set to a short reason ("127.0.0.1 is loopback").
/// Called on worker threads.
using AddressFilter = std::function<bool(const asio::ip::address&, std::string& why_not)>;

/// The production AddressFilter: prohibited_range() refuses every non-public address
/// (including the IPv4-mapped, -compatible, NAT64 and 6to4 forms), and is_interface_address()
/// refuses the host's own addresses in `interfaces` (docs/network.md, "Deciding a destination",
/// docs/cases.md, C-13).
[[nodiscard]] AddressFilter public_address_filter(std::vector<IpAddress> interfaces);

/// What a Server is built from.
///   http_listeners:  listening TCP sockets (file descriptors; the server takes ownership and
///                    closes them) for the HTTP proxy (CONNECT and absolute-form requests).
///   socks_listeners: listening TCP sockets for SOCKS5 (RFC 1928), likewise owned.
///   screen:          the Screen; when empty nothing is refused before the lookup.
///   decide:          the Decider; when empty every destination is refused (fail closed).
///   decide_at_once:  the QuickDecider, tried before the Decider; may be empty. It saves the
///                    hand-over to a worker thread and back for what a rule decides.
///   address_allowed: the AddressFilter; when empty (production) public_address_filter() with
///                    the host's interface addresses collected when the Server is built (if
///                    they cannot be collected every address is refused). Tests pass their own
///                    to reach a server on 127.0.0.1.
///   connect_timeout: limit for the name lookup and for each connect attempt, in seconds
///                    (docs/network.md, "Deciding a destination"; compatibility C46). The
///                    attempts to the addresses of one destination overlap (Happy Eyeballs,
///                    RFC 8305: a new one every 250 ms while earlier ones are pending).
///   idle_timeout:    a tunnel or an HTTP exchange with no byte moving either way for this
///                    long is closed, in seconds.
///   decision_timeout: a decision still pending after this long counts as a refusal, in
///                    seconds (docs/network.md, "Answers the command sees": default 120 s);
///                    0: no limit, a decision may take as long as the command runs (the
///                    question's own deadline ends it: docs/configuration.md,
///                    `approval.questionTimeoutSeconds`).
///   head_timeout:    the whole request head (HTTP) or greeting and request (SOCKS5) must
///                    arrive within this many seconds of the first wait for it (slowloris);
///                    also how long an idle keep-alive connection waits for its next request.
///   log:             receives one line (no newline) per refused or failed connection, on the
///                    proxy's I/O thread; may be empty.
///   refused:         told of every refusal the Screen and the Decider did not make
///                    themselves (a host that is not a host name, an IP destination, a name
///                    that does not resolve, an address that is not public, no decision in
///                    time) as (`host:port` as the client sent it, reason), on the I/O thread;
///                    may be empty. The Screen and the Decider report their own refusals.
///   parents:         the parent proxies (docs/network.md, "A parent proxy"): an allowed
///   destination that `parents.route()` sends through one is
///                    reached with CONNECT through it, without a local lookup or address check
///                    (the parent resolves the name); other destinations go directly, as
///                    without a parent. Empty (the default): every destination goes directly.
///   unreachable:     told once of every allowed destination that could not be reached
///                    (docs/network.md, "Answers the command sees"), on the I/O thread, as
///                    (`host:port`, cause): directly, each address's cause (connect_cause():
///                    `connection refused (203.0.113.2:81)`, several joined by `; `); through its
///                    parent, the parent's failure (an unusable URL, the parent unreachable or
///                    answering CONNECT with an error) naming the parent and its variable, never
///                    its credentials. The client still gets its 502 / SOCKS5 reply. May be empty.
///   max_connections: the most connections open at once; 0: no cap. A connection accepted
///                    past it is closed at once, before a byte is read, so that the process
///                    keeps descriptors for what else it does (connection_cap()).
///   descriptor_ceiling: a connection whose descriptor number is at or above this one is
///                    closed at once too (the kernel gives the lowest free number, so every
///                    one below is in use, whoever opened them); 0: none.
///   capped:          told once, on the I/O thread, when the first connection past
///                    max_connections or descriptor_ceiling is closed, with both; may be empty.
///   max_idle_upstreams: the most idle upstream connections of absolute-form requests kept
///                    for a next request to the same destination (UpstreamPool); 0: none kept.
///   upstream_idle_timeout: a kept upstream connection not used again within this many
///                    seconds is closed.
///   max_kept_lookups: the most names whose checked addresses are kept (LookupCache); 0:
///                    every connection looks its name up.
///   lookup_lifetime: how long a lookup's checked addresses serve later connections to the
///                    same destination, in milliseconds (LookupCache; docs/network.md,
///                    "Deciding a destination", step 3); 0: not at all.
///   credential:      when set, every client must present it before anything is decided
///                    (proxy/protocol/credential.hpp; docs/macos.md: the listeners are then on
///                    the host's loopback, reachable by any local process): each HTTP request
///                    carries it in `Proxy-Authorization: Basic`, else the answer is 407 and
///                    the connection closes; a SOCKS5 client selects the username/password
///                    method (RFC 1929) and sends it, else it gets METHOD X'FF' or STATUS 1 and
///                    the connection closes. Nothing is asked and no name is looked up for a
///                    client without it. Unset (Linux: the listeners are inside the command's
///                    network namespace): no authentication.
///   host_service:    answers the requests to kHostServiceHost (after the credential above,
///                    before any decision, lookup or connection); empty: they get 403.
struct ServerOptions {
  std::vector<int> http_listeners;
  std::vector<int> socks_listeners;
  Screen screen;
  Decider decide;
  QuickDecider decide_at_once;
  AddressFilter address_allowed;
  std::chrono::seconds connect_timeout{30};
  std::chrono::seconds idle_timeout{600};
  std::chrono::seconds decision_timeout{120};
  std::chrono::seconds head_timeout{30};
  std::function<void(std::string_view)> log;
  std::function<void(const std::string& destination, const std::string& reason)> refused;
  ParentProxies parents;
  std::function<void(const std::string& destination, const std::string& cause)> unreachable;
  std::size_t max_connections = 0;
  int descriptor_ceiling = 0;
  std::function<void(std::size_t max_connections, int descriptor_ceiling)> capped;
  std::size_t max_idle_upstreams = 8;
  std::chrono::seconds upstream_idle_timeout{30};
  std::size_t max_kept_lookups = 64;
  std::chrono::milliseconds lookup_lifetime{5000};
  std::optional<ProxyCredential> credential;
  HostService host_service;
};

/// The caps of a proxy that shares its process's descriptors (ServerOptions::max_connections,
/// descriptor_ceiling), from the soft RLIMIT_NOFILE `descriptor_limit` (a count): the proxy
/// leaves kReservedDescriptors to the rest of the process (pi-sandbox's supervisor: the guard's
/// walks and restores, the approval broker's reviewer and terminal, the audit log, the pty
/// relay) and counts kDescriptorsPerConnection for each connection. A limit at or below the
/// reserve gives one connection at a time and a ceiling of the limit itself.
struct ConnectionCap {
  std::size_t max_connections = 0;
  int descriptor_ceiling = 0;
  friend bool operator==(const ConnectionCap&, const ConnectionCap&) = default;
};
/// Descriptors kept for the rest of the process.
inline constexpr std::uint64_t kReservedDescriptors = 256;
/// Descriptors one connection may hold: the client's socket, the upstream's, a pipe pair per
/// direction for splice(2), and two connect attempts of a Happy Eyeballs race.
inline constexpr std::uint64_t kDescriptorsPerConnection = 8;
ConnectionCap connection_cap(std::uint64_t descriptor_limit);

/// The proxy of one sandboxed command. Not copyable or movable. start() and stop() may be
/// called from any thread except the proxy's own (not from `screen`, `decide`, `address_allowed` or
/// `log`).
class Server {
 public:
  /// Takes ownership of the listening sockets; a descriptor that is not a TCP socket is
  /// logged and closed. Starts nothing yet.
  explicit Server(ServerOptions options);
  /// stop().
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Starts accepting on every listener, on one I/O thread the server creates. Once only;
  /// later calls (and calls after stop()) do nothing. Throws std::system_error if the thread
  /// cannot be created.
  void start();

  /// Closes the listeners and every connection, and joins the I/O thread. A connection whose
  /// decision is pending is refused (403 / SOCKS reply 0x02, best effort) and closed; the
  /// Decider call itself is not waited for. Returns promptly; idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pisandbox::proxy
