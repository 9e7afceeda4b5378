#include "proxy/upstream_pool.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace pisandbox::proxy {
namespace {

using tcp = asio::ip::tcp;

// Whether an idle connection can carry a request: open, and the server has neither closed it
// nor sent anything (bytes before a request would be taken for its response). recv(2) with
// MSG_PEEK | MSG_DONTWAIT: EAGAIN is the only good answer.
bool still_idle(tcp::socket& socket) {
  char byte = 0;
  const ssize_t n = ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

}  // namespace

UpstreamPool::UpstreamPool(asio::io_context& io, std::size_t max_idle,
                           std::chrono::milliseconds idle_timeout)
    : io_(io), max_idle_(max_idle), idle_timeout_(idle_timeout) {}

UpstreamPool::~UpstreamPool() {
  *alive_ = false;
  clear();
}

void UpstreamPool::close(Entry& entry) {
  asio::error_code ignored;
  entry.timer->cancel();
  entry.socket->close(ignored);
}

void UpstreamPool::put(const UpstreamKey& key, tcp::socket socket) {
  asio::error_code error;
  const tcp::endpoint peer = socket.remote_endpoint(error);
  if (key.grant.empty() || max_idle_ == 0 || idle_timeout_.count() <= 0 || error ||
      !still_idle(socket)) {
    socket.close(error);
    return;
  }
  while (entries_.size() >= max_idle_) {
    close(entries_.front());
    entries_.pop_front();
  }
  const std::uint64_t id = ++next_id_;
  Entry& entry =
      entries_.emplace_back(Entry{id, key, peer, std::make_unique<tcp::socket>(std::move(socket)),
                                  std::make_unique<asio::steady_timer>(io_, idle_timeout_)});
  // Readable while idle: the server closed it (end of file), reset it, or sent bytes no
  // request asked for; the connection is no longer fit for a request either way.
  entry.socket->async_wait(tcp::socket::wait_read,
                           [this, alive = alive_, id](const asio::error_code& e) {
                             if (e != asio::error::operation_aborted && *alive) drop(id);
                           });
  entry.timer->async_wait([this, alive = alive_, id](const asio::error_code& e) {
    if (!e && *alive) drop(id);
  });
}

std::optional<tcp::socket> UpstreamPool::take(const UpstreamKey& key,
                                              const std::vector<tcp::endpoint>* endpoints) {
  for (auto it = entries_.end(); it != entries_.begin();) {
    --it;
    if (it->key != key) continue;
    if (endpoints != nullptr && std::ranges::find(*endpoints, it->peer) == endpoints->end())
      continue;
    Entry entry = std::move(*it);
    entries_.erase(it);
    entry.timer->cancel();
    asio::error_code ignored;
    entry.socket->cancel(ignored);  // the wait for readability; its handler finds no entry
    if (still_idle(*entry.socket)) return std::move(*entry.socket);
    entry.socket->close(ignored);
    return take(key, endpoints);  // an older one may still be good
  }
  return std::nullopt;
}

bool UpstreamPool::holds(const std::string& host, std::uint16_t port,
                         const ParentSetting* via) const {
  return std::ranges::any_of(entries_, [&](const Entry& entry) {
    return entry.key.host == host && entry.key.port == port && entry.key.via == via;
  });
}

void UpstreamPool::drop(std::uint64_t id) {
  const auto it = std::ranges::find(entries_, id, &Entry::id);
  if (it == entries_.end()) return;
  close(*it);
  entries_.erase(it);
}

void UpstreamPool::clear() {
  for (Entry& entry : entries_) close(entry);
  entries_.clear();
}

}  // namespace pisandbox::proxy
