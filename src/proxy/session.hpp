// pisandbox::proxy — internals of the Server: the state its connections share, and the
// Session every client connection runs (HttpSession, SocksSession). Not a public header.
//
// Threading: everything here runs on the Server's one I/O thread (the Screen too), except the
// jobs given to the WorkerPool (the Decider and the name lookup), which hand their Verdict back
// through ProxyContext::gate. Sessions are C++20 coroutines on Asio (one per connection, plus one
// per tunnel direction and a watchdog); timeouts are deadlines a watchdog enforces by closing the
// sockets, which ends every pending operation.
//
// Coroutine rule for this directory: coroutine parameters are references, pointers or trivial
// values, and a co_await operand creates no temporary of class type (name it first). GCC 12
// destroyed such a temporary twice (a lambda converted to std::function: heap corruption).
#pragma once

#include <asio/awaitable.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <asio/use_awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "proxy/happy_eyeballs.hpp"
#include "proxy/lookup_cache.hpp"
#include "proxy/server.hpp"
#include "proxy/upstream_pool.hpp"
#include "proxy/worker_pool.hpp"

namespace pisandbox::proxy {

using tcp = asio::ip::tcp;

/// Completion token for awaiting without exceptions: results come back as a tuple whose first
/// element is the asio::error_code.
inline constexpr auto kNoThrow = asio::experimental::as_tuple(asio::use_awaitable);

/// The outcome of one step of the decision for a destination.
///   Allowed: go on (after the lookup, `endpoints` holds every checked address, in order);
///   Refused: the Screen or the Decider refused, or an address is not allowed (→ 403, SOCKS
///            0x02);
///   Unreachable: the name lookup failed or timed out (→ 502, SOCKS 0x04).
/// `via`: when the destination goes through a parent proxy (docs/network.md, "A parent
/// proxy"), its setting (owned by ServerOptions::parents), and `endpoints` are the parent's
/// addresses, unchecked; nullptr for a direct connection.
/// `grant`: when Allowed, the Decider's Decision::grant (empty: this request only).
struct Verdict {
  enum class Kind { Allowed, Refused, Unreachable };
  Kind kind = Kind::Refused;
  std::string reason;
  std::vector<tcp::endpoint> endpoints;
  bool reported = false;  ///< a refusal already reported (by the Screen, the Decider, or
                          ///< check_destination() through ServerOptions::refused)
  const ParentSetting* via = nullptr;
  std::string grant;
  /// False when check_destination() left the lookup out for a kept connection (KeptFirst):
  /// `endpoints` is then empty, and look_up_and_check() is still due before a new connection.
  bool looked_up = true;
};

/// Lets a worker hand a result to the I/O thread only while the io_context exists: a worker
/// posts while holding `mutex` and only if `open`; Server::stop() closes it first.
struct Gate {
  std::mutex mutex;
  bool open = true;
};

class Session;

/// What the sessions of one Server share. Only `pool`, `gate`, `decide` and `address_allowed`
/// are used off the I/O thread.
struct ProxyContext {
  ProxyContext(asio::io_context& io_context, ServerOptions server_options);

  asio::io_context& io;
  ServerOptions options;
  std::shared_ptr<const Decider> decide;
  std::shared_ptr<const AddressFilter> address_allowed;
  std::shared_ptr<WorkerPool> pool;
  std::shared_ptr<Gate> gate = std::make_shared<Gate>();
  /// Idle upstream connections of absolute-form requests (I/O thread only).
  UpstreamPool upstreams;
  /// Checked addresses of recent lookups (I/O thread only).
  LookupCache lookups;

  /// Live sessions by id, for stop().
  std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions;
  std::uint64_t next_session = 0;

  /// Calls waiting for a worker, by id: the continuation and its timeout.
  struct PendingCall {
    std::move_only_function<void(Verdict)> complete;
    std::unique_ptr<asio::steady_timer> timer;
  };
  std::unordered_map<std::uint64_t, PendingCall> calls;
  std::uint64_t next_call = 0;

  /// Writes one line to options.log, if set.
  void log(std::string_view line) const;
  /// Resumes the call `id` with `verdict`, unless it already finished (timed out).
  void complete_call(std::uint64_t id, Verdict verdict);
};

/// Runs `job` on the worker pool and resumes with its Verdict, or with `on_timeout` when it
/// takes longer than `timeout` (the job then runs on and its result is dropped); a `timeout` of
/// 0 s is no limit. When the pool refuses the job (closed, or no thread can be made), resumes
/// with Refused at once.
asio::awaitable<Verdict> blocking_call(ProxyContext& context, const std::function<Verdict()>& job,
                                       std::chrono::seconds timeout, const Verdict& on_timeout);

/// The name lookup and address check of docs/network.md, "Deciding a destination", run on a worker:
/// resolves `host` once (asio's resolver: getaddrinfo(3) with AI_ADDRCONFIG), and is Allowed with
/// every address (in resolver order, duplicates dropped) only when there is at least one and every
/// one passes `allowed`; Refused naming the first address refused; Unreachable on a lookup
/// error.
Verdict resolve_and_check(const std::string& host, std::uint16_t port,
                          const AddressFilter& allowed);

/// One client connection. Derived classes implement the protocol in run().
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ProxyContext& context, tcp::socket client);
  virtual ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Registers the session and spawns run() and its watchdog on the I/O thread.
  void start();

  /// For Server::stop(): refuses a pending decision (best effort, without blocking) and
  /// closes both sockets.
  void abort();

 protected:
  enum class Phase { Handshake, Deciding, Connecting, Relaying, Closing };

  /// The protocol; ends with the connection.
  virtual asio::awaitable<void> run() = 0;
  /// The bytes that refuse the destination being decided (403 or SOCKS reply 0x02).
  [[nodiscard]] virtual std::string refusal() const = 0;

  /// Reads more client bytes, appending them to in_. False on end of file, error or close.
  asio::awaitable<bool> read_more();
  /// Writes all of `bytes` to the client. False on error.
  asio::awaitable<bool> write_client(std::string_view bytes);
  /// Steps 2 to 4 for a normalised destination (docs/network.md, "Deciding a destination";
  /// docs/approvals.md, "The order of a decision"): the Screen; then, for a direct connection, the
  /// lookup and the check of every address (a failure is reported and ends here: no question is
  /// asked), then the Decider. When ServerOptions::parents routes the destination reached by `use`
  /// through a parent proxy: the Screen, the Decider, then the lookup of the parent (Verdict::via
  /// set).
  /// KeptFirst::Yes (an absolute-form request that may take a kept connection): when the
  /// UpstreamPool holds a direct connection to `host:port`, the lookup is left out before the
  /// Decider (Verdict::looked_up false): that connection's address passed the same
  /// AddressFilter when it was opened, and the caller looks up before opening another.
  enum class KeptFirst { No, Yes };
  asio::awaitable<Verdict> check_destination(const std::string& host, std::uint16_t port,
                                             ParentUse use, KeptFirst kept = KeptFirst::No);
  /// Step 3 alone, on a worker within connect_timeout: the lookup and the check of every
  /// address (resolve_and_check()); a failure is reported (ServerOptions::refused). The checked
  /// addresses of a lookup made less than ServerOptions::lookup_lifetime ago for the same
  /// destination are used without a worker (LookupCache); an allowed lookup is kept.
  asio::awaitable<Verdict> look_up_and_check(const std::string& host, std::uint16_t port);
  /// What failed when connecting: `message` is the cause (connect_cause() per address, or the
  /// parent's failure naming it). `parent`: the failure is the parent proxy's (its address, or
  /// its answer to CONNECT).
  struct ConnectFailure {
    std::string message;
    asio::error_code code;
    bool timed_out = false;
    bool parent = false;
  };
  /// Step 5: connects upstream_ to one of the checked endpoints with Happy Eyeballs (RFC 8305,
  /// ConnectRace), each attempt limited to connect_timeout. Returns nullopt when connected,
  /// else what failed (every address's cause, in the order of the attempts).
  asio::awaitable<std::optional<ConnectFailure>> connect_upstream(
      const std::vector<tcp::endpoint>& endpoints);
  /// Step 5 for any Verdict: connect_upstream(), then, through a parent, the CONNECT to
  /// `host:port` (open_parent_tunnel()). Returns nullopt when upstream_ leads to the
  /// destination; a failure is told to ServerOptions::unreachable once.
  asio::awaitable<std::optional<ConnectFailure>> connect_destination(const Verdict& verdict,
                                                                     const std::string& host,
                                                                     std::uint16_t port);
  /// The opaque tunnel between client_ and upstream_ (docs/network.md); in_ (bytes the
  /// client sent early) goes upstream first, and bytes that came with a parent's answer to
  /// CONNECT go to the client first. Returns when both directions ended.
  asio::awaitable<void> relay();
  /// Sends what was written, stops sending, reads and drops what the client still sends for
  /// a moment (so that closing does not reset the connection before the client read our
  /// answer, RFC 9112 section 9.6), then closes everything.
  asio::awaitable<void> close_gracefully();
  /// Closes both sockets at once; every pending operation ends.
  void close_all();
  /// Moves exactly `count` bytes from `from` to `to` (splice(2), or a copy where the kernel
  /// cannot splice these sockets), with back-pressure. False when `from` ended first or a
  /// socket failed; nothing else is closed.
  asio::awaitable<bool> move_exactly(tcp::socket& from, tcp::socket& to, std::uint64_t count);
  /// Moves bytes from `from` to `to` until `from` ends. True when it ended with end of file
  /// and every byte was written; nothing is closed or shut down.
  asio::awaitable<bool> move_until_eof(tcp::socket& from, tcp::socket& to);

  /// From now on the watchdog closes the connection at `now + timeout` (time_point::max()
  /// for none); with Extend::OnActivity every byte moved pushes the deadline back.
  enum class Extend { Never, OnActivity };
  void set_deadline(std::chrono::steady_clock::duration timeout, Extend extend);
  void touch();

  /// Logs `<what>: <detail>` with the client's name.
  void report(std::string_view what, std::string_view detail) const;
  /// Tells ServerOptions::refused of a refusal the Decider did not make.
  void note_refusal(const std::string& destination, const std::string& reason) const;

  ProxyContext& context_;
  tcp::socket client_;
  tcp::socket upstream_;
  std::string in_;
  std::string early_download_;  // destination bytes that came with a parent's 2xx, sent first
  Phase phase_ = Phase::Handshake;
  bool closed_ = false;
  bool quiet_timeout_ = false;  // an idle keep-alive connection ending is not worth a log line

 private:
  asio::awaitable<void> watchdog();
  asio::awaitable<Verdict> look_up_parent(const ParentSetting& via);
  asio::awaitable<Verdict> run_decider_call(const std::string& host, std::uint16_t port);
  asio::awaitable<std::optional<std::string>> open_parent_tunnel(const std::string& host,
                                                                 std::uint16_t port,
                                                                 const ParentProxy& parent);
  void arm_connect_timer();
  asio::awaitable<void> pump(tcp::socket& from, tcp::socket& to, std::string* early);
  /// How a move of bytes ended: `limit` bytes moved; end of file before it; a socket failed;
  /// or (splice only) nothing moved because the kernel cannot splice these sockets.
  enum class Moved { Limit, EndOfFile, Failed, Unsupported };
  asio::awaitable<Moved> move_bytes(tcp::socket& from, tcp::socket& to, std::uint64_t limit);
  asio::awaitable<Moved> copy_bytes(tcp::socket& from, tcp::socket& to, std::uint64_t limit);
#ifndef PI_SANDBOX_PORTABLE_RELAY
  asio::awaitable<Moved> splice_bytes(tcp::socket& from, tcp::socket& to, std::uint64_t limit);
#endif

  std::uint64_t id_ = 0;
  asio::steady_timer watchdog_timer_;
  asio::steady_timer connect_timer_;
  asio::steady_timer join_timer_;
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::duration extend_by_{};
  std::uint64_t connect_attempt_ = 0;
  bool connecting_ = false;
  bool connect_timed_out_ = false;
  bool upload_done_ = false;
  std::string early_upload_;  // client bytes that came with the request, sent upstream first
  std::shared_ptr<ConnectRace> race_;  // the connection attempts under way, for close_all()
};

/// Starts the HTTP proxy protocol (CONNECT and absolute-form) on an accepted connection.
void start_http_session(ProxyContext& context, tcp::socket client);
/// Starts the SOCKS5 protocol on an accepted connection.
void start_socks_session(ProxyContext& context, tcp::socket client);

}  // namespace pisandbox::proxy
