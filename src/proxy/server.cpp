#include "proxy/server.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "proxy/interfaces.hpp"
#include "proxy/session.hpp"

namespace pisandbox::proxy {
namespace {

// After accept(2) fails for lack of descriptors or memory, wait this long before the next try
// instead of spinning.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

/// The ceiling a descriptor number can have (an int), as a limit of RLIMIT_NOFILE.
constexpr std::uint64_t kMaxDescriptor = 1u << 30;

IpAddress to_ip(const asio::ip::address& address) {
  if (address.is_v4()) return IpAddress::v4(address.to_v4().to_bytes());
  return IpAddress::v6(address.to_v6().to_bytes());
}

enum class Protocol { Http, Socks };

}  // namespace

ConnectionCap connection_cap(std::uint64_t descriptor_limit) {
  const std::uint64_t limit = std::min(descriptor_limit, kMaxDescriptor);
  if (limit <= kReservedDescriptors) return {1, static_cast<int>(limit)};
  const std::uint64_t usable = limit - kReservedDescriptors;
  return {static_cast<std::size_t>(std::max<std::uint64_t>(1, usable / kDescriptorsPerConnection)),
          static_cast<int>(usable)};
}

AddressFilter public_address_filter(std::vector<IpAddress> interfaces) {
  return
      [interfaces = std::move(interfaces)](const asio::ip::address& address, std::string& why_not) {
        const IpAddress ip = to_ip(address);
        if (const auto range = prohibited_range(ip)) {
          why_not = address.to_string() + ", which is " + *range;
          return false;
        }
        if (is_interface_address(ip, interfaces)) {
          why_not = address.to_string() + ", an address of this host";
          return false;
        }
        return true;
      };
}

struct Server::Impl {
  explicit Impl(ServerOptions options);
  ~Impl();

  void adopt(int fd, Protocol protocol);
  void start();
  void stop();
  void close_everything();
  asio::awaitable<void> accept_loop(tcp::acceptor& acceptor, Protocol protocol);
  bool past_cap(tcp::socket& socket);

  struct Listener {
    std::unique_ptr<tcp::acceptor> acceptor;
    Protocol protocol;
  };

  std::function<void(std::string_view)> log;
  std::unique_ptr<asio::io_context> io = std::make_unique<asio::io_context>(1);
  std::unique_ptr<ProxyContext> context;
  std::vector<Listener> listeners;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
  std::mutex mutex;  // guards started and stopped
  bool started = false;
  bool stopped = false;
  bool said_cap = false;  // the refusal past the cap is logged once
};

Server::Impl::Impl(ServerOptions options) : log(options.log) {
  if (!options.address_allowed) {
    auto interfaces = host_interface_addresses();
    if (interfaces) {
      options.address_allowed = public_address_filter(std::move(*interfaces));
    } else {
      // Fail closed: without the host's own addresses no address can be shown to be safe.
      if (log) log("pi-sandbox proxy: every destination refused: " + interfaces.error().message);
      const std::string reason = "unknown (" + interfaces.error().message + ")";
      options.address_allowed = [reason](const asio::ip::address& address, std::string& why) {
        why = address.to_string() + ", which may be an address of this host: " + reason;
        return false;
      };
    }
  }
  const std::vector<int> http = std::move(options.http_listeners);
  const std::vector<int> socks = std::move(options.socks_listeners);
  context = std::make_unique<ProxyContext>(*io, std::move(options));
  for (int fd : http) adopt(fd, Protocol::Http);
  for (int fd : socks) adopt(fd, Protocol::Socks);
}

Server::Impl::~Impl() {
  stop();
  // Order: the acceptors and the io_context (whose destruction ends the coroutines, and with
  // them the sessions) go before the context the sessions refer to.
  listeners.clear();
  io.reset();
  context.reset();
}

void Server::Impl::adopt(int fd, Protocol protocol) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      (address.ss_family != AF_INET && address.ss_family != AF_INET6)) {
    if (log) log("pi-sandbox proxy: listener " + std::to_string(fd) + " is not a TCP socket");
    ::close(fd);
    return;
  }
  auto acceptor = std::make_unique<tcp::acceptor>(*io);
  asio::error_code error;
  acceptor->assign(address.ss_family == AF_INET ? tcp::v4() : tcp::v6(), fd, error);
  if (error) {
    if (log) log("pi-sandbox proxy: listener " + std::to_string(fd) + ": " + error.message());
    ::close(fd);
    return;
  }
  listeners.push_back(Listener{std::move(acceptor), protocol});
}

asio::awaitable<void> Server::Impl::accept_loop(tcp::acceptor& acceptor, Protocol protocol) {
  while (acceptor.is_open()) {
    auto [error, socket] = co_await acceptor.async_accept(kNoThrow);
    if (error == asio::error::operation_aborted || !acceptor.is_open()) break;
    if (error) {
      // EMFILE, ENFILE, ENOBUFS, ECONNABORTED: the listener stays; try again shortly.
      asio::steady_timer backoff(*io, kAcceptBackoff);
      co_await backoff.async_wait(kNoThrow);
      continue;
    }
    if (past_cap(socket)) continue;
    if (protocol == Protocol::Socks) {
      start_socks_session(*context, std::move(socket));
    } else {
      start_http_session(*context, std::move(socket));
    }
  }
}

bool Server::Impl::past_cap(tcp::socket& socket) {
  const ServerOptions& options = context->options;
  const bool past =
      (options.max_connections != 0 && context->sessions.size() >= options.max_connections) ||
      (options.descriptor_ceiling > 0 && socket.native_handle() >= options.descriptor_ceiling);
  if (!past) return false;
  asio::error_code ignored;
  socket.close(ignored);
  if (said_cap) return true;
  said_cap = true;
  if (options.capped) options.capped(options.max_connections, options.descriptor_ceiling);
  if (log)
    log("pi-sandbox proxy: refused connections past " + std::to_string(options.max_connections) +
        " open at once, or past descriptor " + std::to_string(options.descriptor_ceiling) +
        ": each is closed at once, so that the descriptors kept for the guard, the approvals "
        "and the audit log stay free");
  return true;
}

void Server::Impl::start() {
  std::lock_guard lock(mutex);
  if (started || stopped) return;
  started = true;
  for (Listener& listener : listeners) {
    asio::co_spawn(*io, accept_loop(*listener.acceptor, listener.protocol), asio::detached);
  }
  work.emplace(io->get_executor());
  thread = std::thread([this] {
    // splice(2) into a socket whose peer is gone raises SIGPIPE (it has no MSG_NOSIGNAL);
    // blocked on this thread, the write fails with EPIPE instead of killing the process.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    while (true) {
      try {
        io->run();
        break;
      } catch (const std::exception& e) {
        if (log) log(std::string("pi-sandbox proxy: internal error: ") + e.what());
      }
    }
  });
}

void Server::Impl::close_everything() {
  asio::error_code ignored;
  for (Listener& listener : listeners) listener.acceptor->close(ignored);
  std::vector<std::shared_ptr<Session>> live;
  for (const auto& [id, weak] : context->sessions) {
    if (auto session = weak.lock()) live.push_back(std::move(session));
  }
  for (const auto& session : live) session->abort();
  context->upstreams.clear();
}

void Server::Impl::stop() {
  {
    std::lock_guard lock(mutex);
    if (stopped) return;
    stopped = true;
  }
  {
    // From here no worker touches the io_context (see Gate).
    std::lock_guard gate(context->gate->mutex);
    context->gate->open = false;
  }
  context->pool->close();
  if (thread.joinable()) {
    std::promise<void> closed;
    asio::post(*io, [this, &closed] {
      close_everything();
      closed.set_value();
    });
    closed.get_future().wait();
    work.reset();
    io->stop();
    thread.join();
  } else {
    close_everything();
  }
  // Coroutines still waiting for a worker end here, on this thread, while the io_context
  // they belong to still exists.
  context->calls.clear();
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() = default;

void Server::start() {
  impl_->start();
}

void Server::stop() {
  impl_->stop();
}

}  // namespace pisandbox::proxy
