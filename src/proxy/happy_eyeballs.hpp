// pisandbox::proxy — connecting to the checked addresses of a destination with Happy Eyeballs
// (RFC 8305; docs/network.md, "Deciding a destination"): the addresses interleaved by family, IPv6
// first; a new attempt every 250 ms while earlier ones are pending (or at once when one fails); the
// first that connects wins and the others are closed. Not a public header: used by Session.
//
// Threading: a ConnectRace runs on the Server's I/O thread only. Coroutine rule of session.hpp.
#pragma once

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pisandbox::proxy {

/// RFC 8305 section 5, "Connection Attempt Delay": the recommended 250 milliseconds.
inline constexpr std::chrono::milliseconds kConnectionAttemptDelay{250};

/// The order of the attempts (RFC 8305 section 4): IPv6 and IPv4 addresses alternate, IPv6
/// first; within a family the resolver's order (RFC 6724, getaddrinfo(3)) stays. Every address
/// of `endpoints` appears exactly once.
[[nodiscard]] std::vector<asio::ip::tcp::endpoint> happy_eyeballs_order(
    const std::vector<asio::ip::tcp::endpoint>& endpoints);

/// The cause of one failed connection attempt in the words of the stderr line
/// `pi-sandbox: network: <host:port>: <cause>` (docs/network.md, "Answers the command sees"):
/// `connection refused`, `no route to host`, `network is unreachable`, `timed out after
/// <timeout> s` (when the attempt was stopped by the proxy's limit), else the system's message
/// starting in lowercase.
[[nodiscard]] std::string connect_cause(const asio::error_code& error, bool timed_out,
                                        std::chrono::seconds timeout);

/// One race of connection attempts to the addresses of one destination. Create it with the
/// addresses in happy_eyeballs_order(), co_await run(), then read winner or failures.
class ConnectRace : public std::enable_shared_from_this<ConnectRace> {
 public:
  /// One attempt that did not connect: its address, the error (operation_aborted when the
  /// proxy's limit stopped it) and whether the limit did.
  struct Failure {
    asio::ip::tcp::endpoint endpoint;
    asio::error_code error;
    bool timed_out = false;
  };

  /// `attempt_timeout`: each attempt's limit, in seconds (ServerOptions::connect_timeout);
  /// `delay`: between the starts of two attempts while the earlier one is pending, in
  /// milliseconds (kConnectionAttemptDelay).
  static std::shared_ptr<ConnectRace> create(asio::io_context& io,
                                             std::vector<asio::ip::tcp::endpoint> endpoints,
                                             std::chrono::seconds attempt_timeout,
                                             std::chrono::milliseconds delay);

  /// Runs the attempts; returns when one connected (winner() set, every other attempt closed),
  /// when all failed (failures() holds one entry per address, in the order of the attempts),
  /// or after cancel(). Once only. The caller keeps the race alive (shared_ptr) until it
  /// returns.
  asio::awaitable<void> run();

  /// Stops the race: closes every attempt's socket; run() returns soon without a winner.
  void cancel();

  /// The connected socket, once; nullopt when none connected.
  [[nodiscard]] std::optional<asio::ip::tcp::socket> take_winner();
  [[nodiscard]] std::vector<Failure> failures() const;

  ConnectRace(asio::io_context& io, std::vector<asio::ip::tcp::endpoint> endpoints,
              std::chrono::seconds attempt_timeout, std::chrono::milliseconds delay);

 private:
  struct Attempt {
    Attempt(asio::io_context& io, asio::ip::tcp::endpoint to)
        : endpoint(to), socket(io), timer(io) {}
    asio::ip::tcp::endpoint endpoint;
    asio::ip::tcp::socket socket;
    asio::steady_timer timer;
    bool ended = false;
    bool timed_out = false;
    std::optional<asio::error_code> error;  // set when it failed
  };

  void start(std::size_t index);
  asio::awaitable<void> attempt(Attempt* attempt);
  void close_attempts();
  [[nodiscard]] std::size_t ended_count() const;

  asio::io_context& io_;
  std::vector<asio::ip::tcp::endpoint> endpoints_;
  std::chrono::seconds attempt_timeout_;
  std::chrono::milliseconds delay_;
  std::vector<std::unique_ptr<Attempt>> attempts_;
  asio::steady_timer wake_;  // run() waits on it; a finished attempt cancels it
  std::optional<asio::ip::tcp::socket> winner_;
  bool finished_ = false;  // a winner, or cancel()
};

}  // namespace pisandbox::proxy
