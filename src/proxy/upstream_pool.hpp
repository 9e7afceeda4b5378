// pisandbox::proxy::UpstreamPool — the idle upstream connections of absolute-form requests, kept
// for the next request to the same destination, as a browser's connection pool keeps them
// (RFC 9112 section 9.3: persistent connections).
//
// Source: docs/network.md, "Answers the command sees" (absolute-form: each request decided on its
// own). A connection is kept only under the exact key it was opened for: the normalised host, the
// port, the parent proxy it goes through, and the grant the Decider allowed it under
// (Decision::grant). A request is given a kept connection only after it was decided itself, with
// the same key, and only when the connection's peer is one of the addresses this request's own
// lookup checked; a one-shot approval has no grant, so what it opened is never kept. Everything
// here runs on the proxy's one I/O thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "proxy/server.hpp"

namespace pisandbox::proxy {

/// What a kept connection may serve: the normalised host and port of the destination, the
/// grant it was allowed under (never empty in the pool) and the parent proxy it goes through
/// (nullptr: direct).
struct UpstreamKey {
  std::string host;
  std::uint16_t port = 0;
  std::string grant;
  const ParentSetting* via = nullptr;
  friend bool operator==(const UpstreamKey&, const UpstreamKey&) = default;
};

class UpstreamPool {
 public:
  /// max_idle: the most connections kept at once (the oldest is closed for a newer one);
  /// idle_timeout: a connection not taken again within this long is closed. 0 for either:
  /// nothing is kept.
  UpstreamPool(asio::io_context& io, std::size_t max_idle, std::chrono::milliseconds idle_timeout);
  ~UpstreamPool();
  UpstreamPool(const UpstreamPool&) = delete;
  UpstreamPool& operator=(const UpstreamPool&) = delete;

  /// Keeps `socket` (connected, idle: its last response ended exactly) for `key`. A
  /// connection whose server closes it or sends anything while it waits is closed at once.
  /// Does nothing (the socket is closed) when `key.grant` is empty or nothing may be kept.
  void put(const UpstreamKey& key, asio::ip::tcp::socket socket);

  /// The most recently kept connection for exactly `key` whose peer is one of `*endpoints`
  /// (the addresses the current request's lookup checked), still open and with nothing to read;
  /// nullopt when there is none. Stale connections met on the way are closed.
  /// `endpoints` nullptr: any peer (the caller skipped the lookup because a connection was
  /// kept, Session::KeptFirst; every kept peer passed the AddressFilter when it was opened).
  std::optional<asio::ip::tcp::socket> take(const UpstreamKey& key,
                                            const std::vector<asio::ip::tcp::endpoint>* endpoints);

  /// Whether a connection to `host:port` through `via` is kept, under any grant.
  [[nodiscard]] bool holds(const std::string& host, std::uint16_t port,
                           const ParentSetting* via) const;

  /// Closes every kept connection (Server::stop(): the command's end).
  void clear();

  /// How many connections are kept now.
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::uint64_t id = 0;
    UpstreamKey key;
    asio::ip::tcp::endpoint peer;
    std::unique_ptr<asio::ip::tcp::socket> socket;
    std::unique_ptr<asio::steady_timer> timer;
  };
  void drop(std::uint64_t id);
  static void close(Entry& entry);

  asio::io_context& io_;
  std::size_t max_idle_;
  std::chrono::milliseconds idle_timeout_;
  std::list<Entry> entries_;  // oldest first
  std::uint64_t next_id_ = 0;
  // The wait handlers hold this to know whether the pool still exists.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace pisandbox::proxy
