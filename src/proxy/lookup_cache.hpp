// pisandbox::proxy::LookupCache — the addresses a name resolved to, kept for a few seconds for the
// next connection to the same destination, as curl and browsers keep theirs (curl's DNS cache,
// 60 s by default; docs/network.md, "Deciding a destination", step 3).
//
// Only a lookup whose every address passed the proxy's AddressFilter is kept, and the filter
// does not change while the proxy lives: a kept entry is what step 3 would allow again unless
// the name's records changed since, which the short lifetime bounds. A connection reaches one of
// the addresses that were checked; a name that resolves elsewhere a moment later (DNS
// rebinding) changes nothing for the entry's lifetime. Entries are per proxy, so per command.
// Everything here runs on the proxy's one I/O thread.
#pragma once

#include <asio/ip/tcp.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

namespace pisandbox::proxy {

class LookupCache {
 public:
  using Clock = std::chrono::steady_clock;

  /// max_entries: the most names kept at once (the least recently kept goes for a new one);
  /// lifetime: how long after its lookup an entry is used, in milliseconds. 0 for either:
  /// nothing is kept.
  LookupCache(std::size_t max_entries, std::chrono::milliseconds lifetime);

  /// The checked addresses of `host` (normalised) for `port`, when they were kept less than the
  /// lifetime before `now`; nullptr otherwise (an expired entry is dropped). The pointer is
  /// valid until the next call that changes the cache.
  const std::vector<asio::ip::tcp::endpoint>* find(const std::string& host, std::uint16_t port,
                                                   Clock::time_point now);

  /// Keeps `endpoints` (non-empty, every one allowed by the AddressFilter) for `host:port`,
  /// looked up at `now`, in place of what was kept for it.
  void put(const std::string& host, std::uint16_t port,
           std::vector<asio::ip::tcp::endpoint> endpoints, Clock::time_point now);

  /// Drops what is kept for `host:port` (no address of it could be reached).
  void forget(const std::string& host, std::uint16_t port);

  /// How many names are kept now.
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string host;
    std::uint16_t port = 0;
    std::vector<asio::ip::tcp::endpoint> endpoints;
    Clock::time_point looked_up;
  };
  std::list<Entry>::iterator locate(const std::string& host, std::uint16_t port);

  std::size_t max_entries_;
  std::chrono::milliseconds lifetime_;
  std::list<Entry> entries_;  ///< oldest first; a handful per command, so a list is enough
};

}  // namespace pisandbox::proxy
