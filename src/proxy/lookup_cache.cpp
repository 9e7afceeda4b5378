#include "proxy/lookup_cache.hpp"

#include <utility>

namespace pisandbox::proxy {

LookupCache::LookupCache(std::size_t max_entries, std::chrono::milliseconds lifetime)
    : max_entries_(max_entries), lifetime_(lifetime) {}

std::list<LookupCache::Entry>::iterator LookupCache::locate(const std::string& host,
                                                            std::uint16_t port) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->port == port && it->host == host) return it;
  return entries_.end();
}

const std::vector<asio::ip::tcp::endpoint>* LookupCache::find(const std::string& host,
                                                              std::uint16_t port,
                                                              Clock::time_point now) {
  const auto it = locate(host, port);
  if (it == entries_.end()) return nullptr;
  if (now < it->looked_up || now - it->looked_up >= lifetime_) {
    entries_.erase(it);
    return nullptr;
  }
  return &it->endpoints;
}

void LookupCache::put(const std::string& host, std::uint16_t port,
                      std::vector<asio::ip::tcp::endpoint> endpoints, Clock::time_point now) {
  if (max_entries_ == 0 || lifetime_.count() <= 0 || endpoints.empty()) return;
  if (const auto it = locate(host, port); it != entries_.end()) entries_.erase(it);
  while (entries_.size() >= max_entries_) entries_.pop_front();
  entries_.push_back(Entry{host, port, std::move(endpoints), now});
}

void LookupCache::forget(const std::string& host, std::uint16_t port) {
  if (const auto it = locate(host, port); it != entries_.end()) entries_.erase(it);
}

}  // namespace pisandbox::proxy
