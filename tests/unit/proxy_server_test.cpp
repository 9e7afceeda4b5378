// proxy::Server with real sockets on 127.0.0.1 (docs/network.md, "Answers the command sees"): a
// Server on listeners the test creates, a scripted Decider, and tiny origin servers on threads.
// Nothing of the proxy is mocked. The one test seam is ServerOptions::address_allowed, which here
// accepts 127.0.0.1 and 127.0.0.3 (production refuses every loopback address); test names resolve
// through a private /etc/hosts in a mount namespace of this test process, as the network
// integration tests (tests/integration/network_test.cpp) give the supervisor a hosts file. No test
// asserts a wall-clock time: "does not stall" is shown by ordering (a blocked decider is released
// only after another connection finished).
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <asio/ip/address.hpp>
#include <asio/ip/tcp.hpp>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/unique_fd.hpp"
#include "proxy/happy_eyeballs.hpp"
#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/http.hpp"
#include "proxy/server.hpp"
#include "require.hpp"
#include "test_names.hpp"

namespace pisandbox::proxy {
namespace {

using core::UniqueFd;

// ---- test names ------------------------------------------------------------------------------

constexpr const char* kHosts =
    "127.0.0.1 localhost\n"
    "127.0.0.1 origin.test\n"
    "127.0.0.1 other.test\n"
    "10.0.0.1 private.test\n"
    "127.0.0.1 mixed.test\n"
    "10.0.0.2 mixed.test\n"
    "127.0.0.3 stalled.test\n"
    "127.0.0.1 eyeballs.test\n"
    "127.0.0.3 eyeballs.test\n"
    "127.0.0.1 moving.test\n";

const std::string kNoTestNames = testing::use_private_hosts(kHosts);

#define REQUIRE_TEST_NAMES()               \
  PI_SANDBOX_REQUIRE(kNoTestNames.empty(), \
                     "test names need a private mount namespace: " << kNoTestNames)

// ---- sockets ---------------------------------------------------------------------------------

struct Listener {
  UniqueFd fd;
  std::uint16_t port = 0;
};

// Listens on `ip`:`port` (0: any free port) with room for `backlog` connections not yet
// accepted.
Listener listen_loopback(const std::string& ip = "127.0.0.1", std::uint16_t port = 0,
                         int backlog = 128) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  ::inet_pton(AF_INET, ip.c_str(), &address.sin_addr);
  socklen_t length = sizeof address;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      ::listen(fd.get(), backlog) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    ADD_FAILURE() << "listen on " << ip << ":" << port << " failed";
  }
  return Listener{std::move(fd), ntohs(address.sin_port)};
}

UniqueFd connect_loopback(std::uint16_t port, const std::string& ip = "127.0.0.1") {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const timeval timeout{10, 0};  // a hang fails the test instead of blocking it
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  ::inet_pton(AF_INET, ip.c_str(), &address.sin_addr);
  address.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ADD_FAILURE() << "connect to " << ip << ":" << port << " failed";
  }
  return fd;
}

// A listener that never answers a connection attempt: its accept queue (backlog 0) is full
// with one connection never accepted, and the kernel drops the SYNs of every further one, so a
// connect(2) to it waits as to an address whose packets are lost.
struct Stalled {
  Listener listener;
  UniqueFd filler;
};

Stalled stalled_listener(const std::string& ip, std::uint16_t port = 0) {
  Stalled stalled{listen_loopback(ip, port, 0), {}};
  stalled.filler = connect_loopback(stalled.listener.port, ip);
  return stalled;
}

// The addresses of `name` in the order the proxy's lookup gets them (getaddrinfo(3),
// AI_ADDRCONFIG).
std::vector<std::string> resolved(const std::string& name) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_ADDRCONFIG;
  addrinfo* list = nullptr;
  std::vector<std::string> out;
  if (::getaddrinfo(name.c_str(), "80", &hints, &list) != 0) return out;
  for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(entry->ai_addr);
    if (entry->ai_family == AF_INET) ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    if (std::ranges::find(out, std::string(text)) == out.end()) out.emplace_back(text);
  }
  ::freeaddrinfo(list);
  return out;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Reads until end of file (or error / the 10 s receive timeout).
std::string read_all(int fd) {
  std::string out;
  char buffer[16384];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return out;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string read_exactly(int fd, std::size_t count) {
  std::string out;
  char buffer[16384];
  while (out.size() < count) {
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, count - out.size()), 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

// Reads a head (through the empty line); the bytes after it are left in the socket.
std::string read_head(int fd) {
  std::string out;
  char c;
  while (!out.ends_with("\r\n\r\n") && ::recv(fd, &c, 1, 0) == 1) out.push_back(c);
  return out;
}

std::string pattern(std::size_t size, unsigned seed) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((i * 131 + seed) % 251);
  return out;
}

// ---- origin servers --------------------------------------------------------------------------

// Accepts on `ip` (127.0.0.1) and runs `handler` for each connection on a thread of its own.
class Origin {
 public:
  explicit Origin(std::function<void(int)> handler, const std::string& ip = "127.0.0.1")
      : handler_(std::move(handler)) {
    Listener listener = listen_loopback(ip);
    port_ = listener.port;
    listen_fd_ = std::move(listener.fd);
    acceptor_ = std::thread([this] {
      while (true) {
        const int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) return;
        accepted_.fetch_add(1);
        std::lock_guard lock(mutex_);
        connections_.emplace_back([this, fd] {
          const timeval timeout{10, 0};
          ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
          handler_(fd);
          ::close(fd);
        });
      }
    });
  }
  ~Origin() {
    ::shutdown(listen_fd_.get(), SHUT_RDWR);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (auto& thread : connections_) thread.join();
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_.load(); }

 private:
  std::function<void(int)> handler_;
  UniqueFd listen_fd_;
  std::uint16_t port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::list<std::thread> connections_;
  std::atomic<int> accepted_{0};
};

void echo(int fd) {
  char buffer[16384];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    if (!write_all(fd, std::string_view(buffer, static_cast<std::size_t>(n)))) return;
  }
}

// ---- the proxy under test --------------------------------------------------------------------

// A Decider with a script; the calls it saw. Shared by pointer (the Decider contract).
struct Script {
  std::mutex mutex;
  std::vector<std::string> calls;
  std::function<Decision(const std::string&, std::uint16_t)> answer = [](const auto&, auto) {
    return Decision{true, ""};
  };

  std::vector<std::string> seen() {
    std::lock_guard lock(mutex);
    return calls;
  }
};

// A one-shot gate a decider can wait on.
struct Latch {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  void release() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
  bool wait(std::chrono::seconds limit = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, limit, [this] { return open; });
  }
};

struct Proxy {
  explicit Proxy(std::function<void(ServerOptions&)> tweak = {}) {
    Listener http = listen_loopback();
    Listener socks = listen_loopback();
    http_port = http.port;
    socks_port = socks.port;
    ServerOptions options;
    options.http_listeners = {http.fd.release()};
    options.socks_listeners = {socks.fd.release()};
    options.decide = [script = script](const std::string& host, std::uint16_t port) {
      {
        std::lock_guard lock(script->mutex);
        script->calls.push_back(host + ":" + std::to_string(port));
      }
      return script->answer(host, port);
    };
    // The test seam: the test servers live on 127.0.0.1 and 127.0.0.3, which production
    // refuses.
    options.address_allowed = [](const asio::ip::address& address, std::string& why_not) {
      if (address == asio::ip::make_address("127.0.0.1") ||
          address == asio::ip::make_address("127.0.0.3"))
        return true;
      why_not = address.to_string() + ", which is not the test server";
      return false;
    };
    options.log = [log = log](std::string_view line) {
      std::lock_guard lock(log->mutex);
      log->lines.emplace_back(line);
    };
    options.refused = [told = told](const std::string& destination, const std::string& reason) {
      std::lock_guard lock(told->mutex);
      told->lines.push_back("refused " + destination + ": " + reason);
    };
    options.unreachable = [told = told](const std::string& destination, const std::string& cause) {
      std::lock_guard lock(told->mutex);
      told->lines.push_back(destination + ": " + cause);
    };
    if (tweak) tweak(options);
    server = std::make_unique<Server>(std::move(options));
    server->start();
  }

  struct Log {
    std::mutex mutex;
    std::vector<std::string> lines;
  };
  std::string logged() {
    std::lock_guard lock(log->mutex);
    std::string out;
    for (const auto& line : log->lines) out += line + "\n";
    return out;
  }
  /// What ServerOptions::refused and ::unreachable were told, one line each, in order.
  std::vector<std::string> reported() {
    std::lock_guard lock(told->mutex);
    return told->lines;
  }

  std::shared_ptr<Script> script = std::make_shared<Script>();
  std::shared_ptr<Log> log = std::make_shared<Log>();
  std::shared_ptr<Log> told = std::make_shared<Log>();
  std::uint16_t http_port = 0;
  std::uint16_t socks_port = 0;
  std::unique_ptr<Server> server;
};

const std::string kEstablished = "HTTP/1.1 200 Connection Established\r\n\r\n";

std::string connect_request(const std::string& target) {
  return "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n";
}

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string socks_connect(const std::string& host, std::uint16_t port) {
  return bytes({5, 1, 0, 3, static_cast<int>(host.size())}) + host +
         bytes({port >> 8, port & 0xff});
}

const std::string kSocksOk = bytes({5, 0, 0, 1, 0, 0, 0, 0, 0, 0});
const std::string kSocksNotAllowed = bytes({5, 2, 0, 1, 0, 0, 0, 0, 0, 0});

// Greets a SOCKS5 proxy (no authentication) and sends `request`; returns the reply.
std::string socks_exchange(int fd, const std::string& request) {
  EXPECT_TRUE(write_all(fd, bytes({5, 1, 0})));
  EXPECT_EQ(read_exactly(fd, 2), bytes({5, 0}));
  EXPECT_TRUE(write_all(fd, request));
  return read_exactly(fd, 10);
}

// ---- CONNECT ---------------------------------------------------------------------------------

TEST(ProxyServer, ConnectTunnelsBytesBothWays) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  const std::string target = "Origin.TEST.:" + std::to_string(origin.port());
  UniqueFd client = connect_loopback(proxy.http_port);
  // Early bytes right after the head go through too (compatibility C43).
  ASSERT_TRUE(write_all(client.get(), connect_request(target) + "early "));
  EXPECT_EQ(read_exactly(client.get(), kEstablished.size()), kEstablished);
  const std::string payload = pattern(300000, 7);
  std::thread writer([&] { write_all(client.get(), payload); });
  EXPECT_EQ(read_exactly(client.get(), 6 + payload.size()), "early " + payload);
  writer.join();
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>{"origin.test:" + std::to_string(origin.port())});
}

TEST(ProxyServer, ConnectRefusedGetsTheExact403) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  proxy.script->answer = [](const auto&, auto) { return Decision{false, "denied by test"}; };
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("origin.test:443")));
  EXPECT_EQ(read_all(client.get()), blocked_response());
  EXPECT_EQ(proxy.script->seen(), std::vector<std::string>{"origin.test:443"});
  EXPECT_EQ(origin.accepted(), 0);
  EXPECT_NE(proxy.logged().find("CONNECT origin.test:443 refused: denied by test"),
            std::string::npos)
      << proxy.logged();
}

TEST(ProxyServer, IpLiteralsAreRefusedWithoutAsking) {
  REQUIRE_TEST_NAMES();
  Proxy proxy;
  for (const char* target : {"127.0.0.1:80", "[::1]:80", "2130706433:80", "0x7f.1:80",
                             "[::ffff:127.0.0.1]:80", "localhost:80"}) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), connect_request(target)));
    EXPECT_EQ(read_all(client.get()), blocked_response()) << target;
  }
  EXPECT_TRUE(proxy.script->seen().empty());
}

TEST(ProxyServer, AddressCheckRefusesEvenAllowedNames) {
  REQUIRE_TEST_NAMES();
  Proxy proxy;  // the decider would allow everything
  for (const char* target : {"private.test:80", "mixed.test:80"}) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), connect_request(target)));
    EXPECT_EQ(read_all(client.get()), blocked_response()) << target;
  }
  UniqueFd socks = connect_loopback(proxy.socks_port);
  EXPECT_EQ(socks_exchange(socks.get(), socks_connect("mixed.test", 80)), kSocksNotAllowed);
  // Checked before the decision (docs/approvals.md, "The order of a decision"): the decider, which
  // may ask a human, is not asked about what will be refused anyway.
  EXPECT_TRUE(proxy.script->seen().empty());
  EXPECT_EQ(proxy.reported(),
            (std::vector<std::string>{
                "refused private.test:80: private.test resolves to 10.0.0.1, which is not the "
                "test server",
                "refused mixed.test:80: mixed.test resolves to 10.0.0.2, which is not the test "
                "server",
                "refused mixed.test:80: mixed.test resolves to 10.0.0.2, which is not the test "
                "server"}));
}

TEST(ProxyServer, ANameThatDoesNotResolveIsRefusedWithoutAsking) {
  REQUIRE_TEST_NAMES();
  Proxy proxy;
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("unknown.test:80")));
  const std::string answer = read_all(client.get());
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
  EXPECT_NE(answer.find("could not resolve unknown.test: "), std::string::npos) << answer;
  UniqueFd socks = connect_loopback(proxy.socks_port);
  EXPECT_EQ(socks_exchange(socks.get(), socks_connect("unknown.test", 80)),
            bytes({5, 4, 0, 1, 0, 0, 0, 0, 0, 0}));  // host unreachable
  EXPECT_TRUE(proxy.script->seen().empty());
  const auto reported = proxy.reported();
  ASSERT_EQ(reported.size(), 2u);
  for (const auto& line : reported)
    EXPECT_TRUE(line.starts_with("refused unknown.test:80: could not resolve unknown.test: "))
        << line;
}

TEST(ProxyServer, TheScreenRefusesBeforeTheLookupAndTheDecider) {
  REQUIRE_TEST_NAMES();
  auto screened = std::make_shared<Script>();
  Proxy proxy([screened](ServerOptions& options) {
    options.screen = [screened](const std::string& host, std::uint16_t port) {
      std::lock_guard lock(screened->mutex);
      screened->calls.push_back(host + ":" + std::to_string(port));
      return host == "unknown.test" ? std::optional<std::string>("screened out") : std::nullopt;
    };
  });
  // unknown.test does not resolve: a lookup would make it a 502, the screen makes it a 403.
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("Unknown.TEST.:80")));
  EXPECT_EQ(read_all(client.get()), blocked_response());
  UniqueFd socks = connect_loopback(proxy.socks_port);
  EXPECT_EQ(socks_exchange(socks.get(), socks_connect("unknown.test", 443)), kSocksNotAllowed);
  EXPECT_EQ(screened->seen(), (std::vector<std::string>{"unknown.test:80", "unknown.test:443"}));
  EXPECT_TRUE(proxy.script->seen().empty());
  EXPECT_TRUE(proxy.reported().empty());  // the screen reports its own refusals
  EXPECT_NE(proxy.logged().find("CONNECT Unknown.TEST.:80 refused: screened out"),
            std::string::npos)
      << proxy.logged();
}

TEST(ProxyServer, UnreachableServerIs502NamingTheCause) {
  REQUIRE_TEST_NAMES();
  std::uint16_t closed_port = 0;
  {
    Listener gone = listen_loopback();
    closed_port = gone.port;
  }
  Proxy proxy;
  const std::string port = std::to_string(closed_port);
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("origin.test:" + port)));
  const std::string answer = read_all(client.get());
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
  EXPECT_NE(answer.find("could not connect to origin.test:" + port + ": connection refused " +
                        "(127.0.0.1:" + port + ")"),
            std::string::npos)
      << answer;
  UniqueFd socks = connect_loopback(proxy.socks_port);
  EXPECT_EQ(socks_exchange(socks.get(), socks_connect("origin.test", closed_port)),
            bytes({5, 5, 0, 1, 0, 0, 0, 0, 0, 0}));
  // One report per connection (docs/network.md, "Answers the command sees"), with the cause
  // and the address.
  const std::string line = "origin.test:" + port + ": connection refused (127.0.0.1:" + port + ")";
  EXPECT_EQ(proxy.reported(), (std::vector<std::string>{line, line}));
}

// ---- lookups kept for the next connection (LookupCache) --------------------------------------

// Points moving.test at 10.0.0.9 (an address the test filter refuses) in this process's private
// /etc/hosts for the life of the object, then back at 127.0.0.1: a new lookup of it is refused.
struct MovedName {
  MovedName() { rewrite("10.0.0.9 moving.test\n"); }
  ~MovedName() { rewrite("127.0.0.1 moving.test\n"); }
  MovedName(const MovedName&) = delete;
  MovedName& operator=(const MovedName&) = delete;
  static void rewrite(const std::string& moving) {
    const std::string listed = "127.0.0.1 moving.test\n";
    std::string hosts = kHosts;
    hosts.replace(hosts.find(listed), listed.size(), moving);
    std::ofstream("/etc/hosts", std::ios::trunc) << hosts;
  }
};

// One CONNECT to `target` through `proxy`; the first line of the answer.
std::string connect_answer(const Proxy& proxy, const std::string& target) {
  UniqueFd client = connect_loopback(proxy.http_port);
  EXPECT_TRUE(write_all(client.get(), connect_request(target)));
  std::string answer = read_exactly(client.get(), kEstablished.size());
  return answer.substr(0, answer.find("\r\n"));
}

TEST(ProxyServer, ALookupServesTheSameDestinationForItsLifetime) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  const std::string target = "moving.test:" + std::to_string(origin.port());
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 200 Connection Established");
  MovedName moved;
  ASSERT_EQ(resolved("moving.test"), std::vector<std::string>{"10.0.0.9"});
  // Within 5 s of its lookup the name's checked address serves again, without a new lookup;
  // SOCKS5 shares it.
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 200 Connection Established");
  UniqueFd socks = connect_loopback(proxy.socks_port);
  EXPECT_EQ(socks_exchange(socks.get(), socks_connect("moving.test", origin.port())), kSocksOk);
  // Each connection is still decided.
  EXPECT_EQ(proxy.script->seen(), std::vector<std::string>(3, target));
  // Another port of the same name is another destination: looked up, and refused.
  EXPECT_EQ(connect_answer(proxy, "moving.test:1"), "HTTP/1.1 403 Forbidden");
}

TEST(ProxyServer, AKeptLookupEndsWithItsLifetime) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy(
      [](ServerOptions& options) { options.lookup_lifetime = std::chrono::milliseconds(200); });
  const std::string target = "moving.test:" + std::to_string(origin.port());
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 200 Connection Established");
  MovedName moved;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 403 Forbidden");
  EXPECT_EQ(proxy.reported(),
            std::vector<std::string>{"refused " + target +
                                     ": moving.test resolves to 10.0.0.9, which is not the test "
                                     "server"});
}

TEST(ProxyServer, NoLookupIsKeptWhenTheLifetimeIsZero) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy(
      [](ServerOptions& options) { options.lookup_lifetime = std::chrono::milliseconds(0); });
  const std::string target = "moving.test:" + std::to_string(origin.port());
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 200 Connection Established");
  MovedName moved;
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 403 Forbidden");
}

TEST(ProxyServer, ADestinationNoAddressOfWhichAnsweredIsLookedUpAgain) {
  REQUIRE_TEST_NAMES();
  std::uint16_t closed_port = 0;
  {
    Listener gone = listen_loopback();
    closed_port = gone.port;
  }
  Proxy proxy;
  const std::string target = "moving.test:" + std::to_string(closed_port);
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 502 Bad Gateway");
  MovedName moved;
  // The refused connect dropped what the lookup kept: the name is looked up again.
  EXPECT_EQ(connect_answer(proxy, target), "HTTP/1.1 403 Forbidden");
}

TEST(ProxyServer, AnAttemptPastTheConnectTimeoutNamesTheLimit) {
  REQUIRE_TEST_NAMES();
  Stalled stalled = stalled_listener("127.0.0.3");
  Proxy proxy([](ServerOptions& options) { options.connect_timeout = std::chrono::seconds(1); });
  const std::string port = std::to_string(stalled.listener.port);
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("stalled.test:" + port)));
  const std::string answer = read_all(client.get());
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << answer;
  EXPECT_NE(answer.find("could not connect to stalled.test:" + port +
                        ": timed out after 1 s (127.0.0.3:" + port + ")"),
            std::string::npos)
      << answer;
  EXPECT_EQ(proxy.reported(),
            std::vector<std::string>{"stalled.test:" + port +
                                     ": timed out after 1 s (127.0.0.3:" + port + ")"});
}

// ---- Happy Eyeballs (RFC 8305) ---------------------------------------------------------------

asio::ip::tcp::endpoint endpoint(const char* address) {
  return {asio::ip::make_address(address), 443};
}

TEST(ProxyServer, HappyEyeballsOrderAlternatesFamiliesIpv6First) {
  const std::vector<asio::ip::tcp::endpoint> resolved_order = {
      endpoint("203.0.113.1"), endpoint("203.0.113.2"), endpoint("203.0.113.3"),
      endpoint("2001:db8::1"), endpoint("2001:db8::2")};
  EXPECT_EQ(happy_eyeballs_order(resolved_order),
            (std::vector<asio::ip::tcp::endpoint>{endpoint("2001:db8::1"), endpoint("203.0.113.1"),
                                                  endpoint("2001:db8::2"), endpoint("203.0.113.2"),
                                                  endpoint("203.0.113.3")}));
  EXPECT_EQ(
      happy_eyeballs_order({endpoint("203.0.113.1"), endpoint("203.0.113.2")}),
      (std::vector<asio::ip::tcp::endpoint>{endpoint("203.0.113.1"), endpoint("203.0.113.2")}));
  EXPECT_TRUE(happy_eyeballs_order({}).empty());
}

TEST(ProxyServer, HappyEyeballsAStalledFirstAddressDoesNotHoldUpTheNext) {
  REQUIRE_TEST_NAMES();
  // The first address the lookup gives stalls; the second answers, on the same port.
  const std::vector<std::string> order = resolved("eyeballs.test");
  ASSERT_EQ(order.size(), 2u);
  Origin origin(echo, order[1]);
  Stalled stalled = stalled_listener(order[0], origin.port());
  // One attempt after the other, the stalled one would hold the connection for 60 s, past
  // the client's 10 s receive limit; with attempts every 250 ms the second wins at once.
  Proxy proxy([](ServerOptions& options) { options.connect_timeout = std::chrono::seconds(60); });
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(
      write_all(client.get(), connect_request("eyeballs.test:" + std::to_string(origin.port()))));
  EXPECT_EQ(read_exactly(client.get(), kEstablished.size()), kEstablished);
  ASSERT_TRUE(write_all(client.get(), "ping"));
  EXPECT_EQ(read_exactly(client.get(), 4), "ping");
  EXPECT_EQ(origin.accepted(), 1);
  EXPECT_TRUE(proxy.reported().empty());
}

TEST(ProxyServer, HalfCloseReachesTheServer) {
  REQUIRE_TEST_NAMES();
  // The server answers only after the client finished sending (end of file).
  Origin origin([](int fd) {
    const std::string request = read_all(fd);
    write_all(fd, "got " + std::to_string(request.size()) + " bytes");
  });
  Proxy proxy;
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(
      write_all(client.get(), connect_request("origin.test:" + std::to_string(origin.port()))));
  EXPECT_EQ(read_exactly(client.get(), kEstablished.size()), kEstablished);
  ASSERT_TRUE(write_all(client.get(), pattern(100000, 3)));
  ::shutdown(client.get(), SHUT_WR);
  EXPECT_EQ(read_all(client.get()), "got 100000 bytes");
}

TEST(ProxyServer, ManyConcurrentTunnels) {
  REQUIRE_TEST_NAMES();
  constexpr int kTunnels = 100;
  Origin origin(echo);
  Proxy proxy;
  const std::string target = "origin.test:" + std::to_string(origin.port());
  std::vector<UniqueFd> clients;
  // All connect and ask first, so that their decisions and tunnels overlap.
  for (int i = 0; i < kTunnels; ++i) {
    clients.push_back(connect_loopback(i % 2 == 0 ? proxy.http_port : proxy.socks_port));
    if (i % 2 == 0) {
      ASSERT_TRUE(write_all(clients.back().get(), connect_request(target)));
    } else {
      ASSERT_TRUE(write_all(clients.back().get(),
                            bytes({5, 1, 0}) + socks_connect("origin.test", origin.port())));
    }
  }
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < kTunnels; ++i) {
    threads.emplace_back([&, i] {
      const int fd = clients[static_cast<std::size_t>(i)].get();
      const std::string hello = i % 2 == 0 ? kEstablished : bytes({5, 0}) + kSocksOk;
      if (read_exactly(fd, hello.size()) != hello) return;
      const std::string payload =
          pattern(20000 + static_cast<std::size_t>(i), static_cast<unsigned>(i));
      if (!write_all(fd, payload)) return;
      if (read_exactly(fd, payload.size()) == payload) good.fetch_add(1);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(good.load(), kTunnels);
  EXPECT_EQ(proxy.script->seen().size(), static_cast<std::size_t>(kTunnels));
}

// ---- the descriptor reserve (docs/security.md, "The guard": fail closed) --------------------

TEST(ConnectionCap, KeepsTheReserveAndCountsEightDescriptorsAConnection) {
  EXPECT_EQ(connection_cap(20000), (ConnectionCap{(20000 - 256) / 8, 20000 - 256}));
  EXPECT_EQ(connection_cap(1024), (ConnectionCap{96, 768}));
  EXPECT_EQ(connection_cap(260), (ConnectionCap{1, 4}));
  EXPECT_EQ(connection_cap(256), (ConnectionCap{1, 256}));
  EXPECT_EQ(connection_cap(std::uint64_t{1} << 40),
            (ConnectionCap{((std::uint64_t{1} << 30) - 256) / 8, (1 << 30) - 256}));
}

// A connection past max_connections is closed before a byte is read (the client sees the end
// of the stream), said once; the ones below the cap are served, and a place freed is reused.
TEST(ProxyServer, AConnectionPastTheCapIsClosedAtOnce) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy([](ServerOptions& options) { options.max_connections = 2; });
  const std::string target = "origin.test:" + std::to_string(origin.port());
  std::vector<UniqueFd> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(connect_loopback(proxy.http_port));
    ASSERT_TRUE(write_all(held.back().get(), connect_request(target)));
    ASSERT_EQ(read_exactly(held.back().get(), kEstablished.size()), kEstablished);
  }
  for (int i = 0; i < 2; ++i) {
    UniqueFd past = connect_loopback(i == 0 ? proxy.http_port : proxy.socks_port);
    EXPECT_EQ(read_all(past.get()), "");
  }
  EXPECT_EQ(proxy.logged(),
            "pi-sandbox proxy: refused connections past 2 open at once, or past descriptor 0: "
            "each is closed at once, so that the descriptors kept for the guard, the approvals "
            "and the audit log stay free\n");
  held.pop_back();
  // The proxy sees the close on its own thread: the freed place is taken within a few tries.
  bool served = false;
  for (int attempt = 0; attempt < 100 && !served; ++attempt) {
    UniqueFd next = connect_loopback(proxy.http_port);
    if (!write_all(next.get(), connect_request(target))) continue;
    served = read_exactly(next.get(), kEstablished.size()) == kEstablished;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(served);
  EXPECT_EQ(proxy.script->seen().size(), 3u);
}

// ---- servers that close right after their response (docs/network.md: no truncation)
// -----------------

TEST(ProxyServer, NoByteLostWhenTheServerClosesRightAfterWriting) {
  REQUIRE_TEST_NAMES();
  const std::string body = pattern(200 * 1024 + 17, 11);
  Origin origin([&](int fd) { write_all(fd, body); });  // writes, then closes at once
  Proxy proxy;
  const std::string target = "origin.test:" + std::to_string(origin.port());
  for (int i = 0; i < 200; ++i) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), connect_request(target)));
    const std::string received = read_all(client.get());
    ASSERT_EQ(received.size(), kEstablished.size() + body.size()) << "repetition " << i;
    ASSERT_TRUE(received == kEstablished + body) << "repetition " << i;
  }
  for (int i = 0; i < 50; ++i) {
    UniqueFd client = connect_loopback(proxy.socks_port);
    ASSERT_EQ(socks_exchange(client.get(), socks_connect("origin.test", origin.port())), kSocksOk);
    ASSERT_TRUE(read_all(client.get()) == body) << "SOCKS repetition " << i;
  }
}

TEST(ProxyServer, AbsoluteFormResponseUntilCloseArrivesWhole) {
  REQUIRE_TEST_NAMES();
  const std::string body = pattern(150 * 1024 + 3, 5);
  Origin origin([&](int fd) {
    read_head(fd);
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n" + body);
  });
  Proxy proxy;
  const std::string url = "http://origin.test:" + std::to_string(origin.port()) + "/file";
  for (int i = 0; i < 50; ++i) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), "GET " + url + " HTTP/1.1\r\nHost: origin.test\r\n\r\n"));
    const std::string head = read_head(client.get());
    ASSERT_EQ(head,
              "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
              "Connection: close\r\n\r\n");
    ASSERT_TRUE(read_all(client.get()) == body) << "repetition " << i;
  }
}

// ---- absolute-form ---------------------------------------------------------------------------

TEST(ProxyServer, AbsoluteFormKeepAliveDecidesEachRequest) {
  REQUIRE_TEST_NAMES();
  std::mutex mutex;
  std::vector<std::string> seen_heads;
  Origin origin([&](int fd) {
    const std::string head = read_head(fd);
    {
      std::lock_guard lock(mutex);
      seen_heads.push_back(head);
    }
    write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=5\r\n\r\nhello");
  });
  Proxy proxy;
  int calls = 0;
  proxy.script->answer = [&calls](const auto&, auto) {
    return Decision{++calls == 1, "second request refused"};
  };
  const std::string port = std::to_string(origin.port());
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), "GET http://origin.test:" + port +
                                          "/a?b=1 HTTP/1.1\r\nHost: origin.test\r\n"
                                          "Proxy-Connection: keep-alive\r\n"
                                          "Proxy-Authorization: Basic eDp5\r\n"
                                          "Accept: */*\r\n\r\n"));
  EXPECT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(read_exactly(client.get(), 5), "hello");
  ASSERT_TRUE(write_all(client.get(), "GET http://other.test:" + port +
                                          "/second HTTP/1.1\r\nHost: other.test\r\n\r\n"));
  EXPECT_EQ(read_all(client.get()), blocked_response());
  EXPECT_EQ(proxy.script->seen(),
            (std::vector<std::string>{"origin.test:" + port, "other.test:" + port}));
  std::lock_guard lock(mutex);
  ASSERT_EQ(seen_heads.size(), 1u);
  EXPECT_EQ(seen_heads[0], "GET /a?b=1 HTTP/1.1\r\nHost: origin.test:" + port +
                               "\r\nAccept: */*\r\nConnection: close\r\n\r\n");
}

// ---- absolute-form: kept upstream connections (UpstreamPool) --------------------------------

// An origin that answers every request on a connection, until the client closes it, with
// `respond(head)`; it records each head with the number of its connection (1, 2, ... in the
// order accepted) and whether a connection ended by the proxy closing it.
struct KeepAliveOrigin {
  explicit KeepAliveOrigin(std::function<std::string(const std::string&)> respond)
      : respond(std::move(respond)), origin([this](int fd) { serve(fd); }) {}

  void serve(int fd) {
    int number = 0;
    {
      std::lock_guard lock(mutex);
      number = ++connections;
    }
    while (true) {
      const std::string head = read_head(fd);
      if (head.empty()) break;
      {
        std::lock_guard lock(mutex);
        heads.emplace_back(number, head);
      }
      const std::string response = respond(head);
      if (!write_all(fd, response) || response.find("Connection: close") != std::string::npos)
        return;
    }
    std::lock_guard lock(mutex);
    ++closed_by_proxy;
    changed.notify_all();
  }
  std::vector<std::pair<int, std::string>> seen() {
    std::lock_guard lock(mutex);
    return heads;
  }
  bool wait_closed(int count) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(20),
                            [&] { return closed_by_proxy >= count; });
  }

  std::function<std::string(const std::string&)> respond;
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::pair<int, std::string>> heads;
  int connections = 0;
  int closed_by_proxy = 0;
  Origin origin;  // last: its threads stop before the members above go
};

const std::string kHello = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

std::string get(const std::string& host, std::uint16_t port, const std::string& path,
                const std::string& method = "GET") {
  return method + " http://" + host + ":" + std::to_string(port) + path +
         " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
}

TEST(ProxyServer, AbsoluteFormReusesTheUpstreamConnectionUnderTheSameGrant) {
  REQUIRE_TEST_NAMES();
  KeepAliveOrigin server([](const std::string&) { return kHello; });
  Proxy proxy;
  proxy.script->answer = [](const auto&, auto) { return Decision{true, "", "allowed: origin"}; };
  const std::uint16_t port = server.origin.port();
  {
    UniqueFd client = connect_loopback(proxy.http_port);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(write_all(client.get(), get("origin.test", port, "/" + std::to_string(i))));
      ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
      ASSERT_EQ(read_exactly(client.get(), 5), "hello");
    }
  }
  // Another client connection of the same command, later: the same kept connection.
  UniqueFd second = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(second.get(), get("origin.test", port, "/3")));
  ASSERT_EQ(read_head(second.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  ASSERT_EQ(read_exactly(second.get(), 5), "hello");
  EXPECT_EQ(server.origin.accepted(), 1);
  // Each request was still decided on its own.
  EXPECT_EQ(proxy.script->seen().size(), 4u);
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1].second,
            "GET /1 HTTP/1.1\r\nHost: origin.test:" + std::to_string(port) + "\r\n\r\n");
  // The command's end closes it.
  proxy.server->stop();
  EXPECT_TRUE(server.wait_closed(1));
}

TEST(ProxyServer, AKeptConnectionServesOnlyTheSameDestinationAndGrant) {
  REQUIRE_TEST_NAMES();
  KeepAliveOrigin server([](const std::string&) { return kHello; });
  Proxy proxy;
  // origin.test and other.test are both 127.0.0.1: the same address, other destinations.
  std::vector<Decision> answers = {
      {true, "", "rule A"},        // origin.test: opens connection 1
      {true, "", "rule A"},        // other.test: not origin.test's, opens 2
      {false, "refused now", ""},  // origin.test refused: nothing reaches the server
      {true, "", ""},              // origin.test, a one-shot approval: opens 3
      {true, "", "rule B"},        // origin.test under another rule: opens 4
      {true, "", "rule A"},        // origin.test under rule A again: connection 1
  };
  auto next = std::make_shared<std::atomic<std::size_t>>(0);
  proxy.script->answer = [answers, next](const auto&, auto) { return answers.at((*next)++); };
  const std::uint16_t port = server.origin.port();
  const std::vector<std::string> hosts = {"origin.test", "other.test",  "origin.test",
                                          "origin.test", "origin.test", "origin.test"};
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), get(hosts[i], port, "/" + std::to_string(i))));
    if (i == 2) {
      EXPECT_EQ(read_all(client.get()), blocked_response());
      continue;
    }
    ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n") << i;
    ASSERT_EQ(read_exactly(client.get(), 5), "hello");
  }
  const auto seen = server.seen();
  std::vector<std::pair<int, std::string>> paths;
  for (const auto& [connection, head] : seen)
    paths.emplace_back(connection, head.substr(4, head.find(' ', 4) - 4));
  EXPECT_EQ(paths, (std::vector<std::pair<int, std::string>>{
                       {1, "/0"}, {2, "/1"}, {3, "/3"}, {4, "/4"}, {1, "/5"}}));
  // What the one-shot approval opened was not kept: it was asked to close.
  EXPECT_NE(seen[2].second.find("Connection: close\r\n"), std::string::npos) << seen[2].second;
  EXPECT_EQ(seen[1].second.find("Connection: close"), std::string::npos) << seen[1].second;
}

TEST(ProxyServer, AKeptConnectionEndsWithConnectionCloseOrAResponseWithoutLength) {
  REQUIRE_TEST_NAMES();
  // Per request path: what the server answers.
  KeepAliveOrigin server([](const std::string& head) -> std::string {
    if (head.starts_with("GET /close "))
      return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    if (head.starts_with("GET /http10 ")) return "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
    if (head.starts_with("GET /until-close "))
      return "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it";
    if (head.starts_with("GET /chunked "))
      return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
    if (head.starts_with("HEAD ")) return "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n";
    if (head.starts_with("GET /empty ")) return "HTTP/1.1 204 No Content\r\n\r\n";
    if (head.starts_with("GET /extra "))  // bytes after the message: never used again
      return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokSURPLUS";
    return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
  });
  Proxy proxy;
  proxy.script->answer = [](const auto&, auto) { return Decision{true, "", "rule"}; };
  const std::uint16_t port = server.origin.port();
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"GET", "/a"}, {"GET", "/close"},   {"GET", "/b"},  {"GET", "/http10"},
      {"GET", "/c"}, {"GET", "/chunked"}, {"HEAD", "/d"}, {"GET", "/empty"},
      {"GET", "/e"}, {"GET", "/extra"},   {"GET", "/f"},  {"GET", "/until-close"},
      {"GET", "/g"}};
  for (const auto& [method, path] : requests) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), get("origin.test", port, path, method)));
    const std::string head = read_head(client.get());
    ASSERT_TRUE(head.starts_with("HTTP/1.1 2")) << path << ": " << head;
    if (path == "/until-close") {
      EXPECT_EQ(read_all(client.get()), "all of it");
    } else if (path == "/chunked") {
      EXPECT_EQ(read_exactly(client.get(), 12), "2\r\nok\r\n0\r\n\r\n");
    } else if (method == "GET" && path != "/empty") {
      EXPECT_EQ(read_exactly(client.get(), 2), "ok") << path;
    }
  }
  std::vector<std::pair<int, std::string>> paths;
  for (const auto& [connection, head] : server.seen())
    paths.emplace_back(connection, head.substr(0, head.find(" HTTP/")));
  EXPECT_EQ(paths, (std::vector<std::pair<int, std::string>>{{1, "GET /a"},
                                                             {1, "GET /close"},
                                                             {2, "GET /b"},
                                                             {2, "GET /http10"},
                                                             {3, "GET /c"},
                                                             {3, "GET /chunked"},
                                                             {3, "HEAD /d"},
                                                             {3, "GET /empty"},
                                                             {3, "GET /e"},
                                                             {3, "GET /extra"},
                                                             {4, "GET /f"},
                                                             {4, "GET /until-close"},
                                                             {5, "GET /g"}}));
}

TEST(ProxyServer, AKeptConnectionIsClosedAfterTheIdleTimeout) {
  REQUIRE_TEST_NAMES();
  KeepAliveOrigin server([](const std::string&) { return kHello; });
  Proxy proxy(
      [](ServerOptions& options) { options.upstream_idle_timeout = std::chrono::seconds(1); });
  proxy.script->answer = [](const auto&, auto) { return Decision{true, "", "rule"}; };
  const std::uint16_t port = server.origin.port();
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), get("origin.test", port, "/1")));
  ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  ASSERT_EQ(read_exactly(client.get(), 5), "hello");
  // The proxy closes the idle connection by itself (the origin sees end of file) ...
  ASSERT_TRUE(server.wait_closed(1));
  // ... and the next request gets a new one.
  ASSERT_TRUE(write_all(client.get(), get("origin.test", port, "/2")));
  ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  ASSERT_EQ(read_exactly(client.get(), 5), "hello");
  EXPECT_EQ(server.origin.accepted(), 2);
}

TEST(ProxyServer, AKeptConnectionTheServerClosedIsReplacedWithoutAnError) {
  REQUIRE_TEST_NAMES();
  // The server closes after each response although it did not say so (its keep-alive time
  // is over): the proxy must notice, or send the request again on a new connection.
  Origin origin([](int fd) {
    read_head(fd);
    write_all(fd, kHello);
  });
  Proxy proxy;
  proxy.script->answer = [](const auto&, auto) { return Decision{true, "", "rule"}; };
  UniqueFd client = connect_loopback(proxy.http_port);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(write_all(client.get(), get("origin.test", origin.port(), "/")));
    ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n") << i;
    ASSERT_EQ(read_exactly(client.get(), 5), "hello");
  }
  EXPECT_EQ(origin.accepted(), 20);
}

TEST(ProxyServer, AKeptConnectionClosedUnderTheRequestIsReplacedOnce) {
  REQUIRE_TEST_NAMES();
  // Each connection answers its first request and closes on its second without a byte of
  // answer, as a server whose keep-alive time ran out just then.
  Origin origin([](int fd) {
    read_head(fd);
    write_all(fd, kHello);
    read_head(fd);
  });
  // The rule decides at once (no worker, no Decider call); the kept connection then also
  // saves the lookup, which must still come before the replacement is opened.
  Proxy proxy([](ServerOptions& options) {
    options.decide_at_once = [](const std::string& host, std::uint16_t) {
      return host == "origin.test" ? std::optional<Decision>(Decision{true, "", "rule"})
                                   : std::nullopt;
    };
  });
  UniqueFd client = connect_loopback(proxy.http_port);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(write_all(client.get(), get("origin.test", origin.port(), "/")));
    ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n") << i;
    ASSERT_EQ(read_exactly(client.get(), 5), "hello");
  }
  EXPECT_EQ(origin.accepted(), 2);
  EXPECT_TRUE(proxy.script->seen().empty());
  // What the rule does not decide goes to the Decider.
  ASSERT_TRUE(write_all(client.get(), get("other.test", origin.port(), "/")));
  ASSERT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>{"other.test:" + std::to_string(origin.port())});
}

TEST(ProxyServer, AbsoluteFormForwardsBodiesWithTheirFraming) {
  REQUIRE_TEST_NAMES();
  // The origin reads a Content-Length or chunked request and answers with a chunked echo.
  Origin origin([](int fd) {
    const std::string head = read_head(fd);
    std::string body;
    if (head.find("Content-Length: ") != std::string::npos) {
      const auto at = head.find("Content-Length: ") + 16;
      body = read_exactly(fd, std::stoul(head.substr(at)));
    } else {
      body = "chunked:";
      std::string rest;
      while (!rest.ends_with("0\r\n\r\n")) {
        char c;
        if (::recv(fd, &c, 1, 0) != 1) break;
        rest.push_back(c);
      }
      body += std::to_string(rest.size());
    }
    std::string response =
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"
        "Transfer-Encoding: chunked\r\n\r\n";
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", body.size());
    response += size + body + "\r\n0\r\nX-Trailer: t\r\n\r\n";
    write_all(fd, response);
  });
  Proxy proxy;
  const std::string url = "http://origin.test:" + std::to_string(origin.port()) + "/up";
  UniqueFd client = connect_loopback(proxy.http_port);
  const std::string upload = pattern(70000, 9);
  ASSERT_TRUE(write_all(client.get(),
                        "POST " + url + " HTTP/1.1\r\nContent-Length: 70000\r\n\r\n" + upload));
  const std::string expected_head =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(read_exactly(client.get(), expected_head.size()), expected_head);
  const std::string chunked = "11170\r\n" + upload + "\r\n0\r\nX-Trailer: t\r\n\r\n";
  EXPECT_TRUE(read_exactly(client.get(), chunked.size()) == chunked);
  // Same connection, a chunked request body.
  const std::string chunked_upload = "5\r\nhello\r\n6;x=y\r\n world\r\n0\r\n\r\n";
  ASSERT_TRUE(
      write_all(client.get(),
                "PUT " + url + " HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked_upload));
  EXPECT_EQ(read_exactly(client.get(), expected_head.size()), expected_head);
  const std::string echoed = "chunked:" + std::to_string(chunked_upload.size());
  EXPECT_EQ(read_exactly(client.get(), 3 + echoed.size() + 2),
            "a\r\n" + echoed + "\r\n");  // size line "a" = 10 bytes
  EXPECT_EQ(proxy.script->seen().size(), 2u);
}

TEST(ProxyServer, AnEarlyAnswerDuringAnUploadArrivesWhole) {
  REQUIRE_TEST_NAMES();
  Origin origin([](int fd) {
    read_head(fd);
    // Answers at once and closes without reading the body.
    write_all(
        fd, "HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbig!");
  });
  Proxy proxy;
  const std::string url = "http://origin.test:" + std::to_string(origin.port()) + "/";
  UniqueFd client = connect_loopback(proxy.http_port);
  const std::string body(2 * 1024 * 1024, 'u');
  std::thread writer([&] {
    write_all(client.get(), "POST " + url + " HTTP/1.1\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body);
  });
  // Whether the upload still runs when the answer comes depends on socket buffer sizes: the
  // connection then closes ("Connection: close"), or stays open; the answer is whole either way.
  const std::string head = read_head(client.get());
  EXPECT_TRUE(head.starts_with("HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\n")) << head;
  EXPECT_EQ(read_exactly(client.get(), 4), "big!");
  ::shutdown(client.get(), SHUT_RDWR);
  writer.join();
}

TEST(ProxyServer, AMalformedChunkedUploadClosesTheConnection) {
  REQUIRE_TEST_NAMES();
  Origin origin([](int fd) { read_all(fd); });
  Proxy proxy;
  const std::string url = "http://origin.test:" + std::to_string(origin.port()) + "/";
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), "POST " + url +
                                          " HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                          "5\r\nhello\r\nnot-hex\r\n"));
  EXPECT_EQ(read_all(client.get()), "");
  EXPECT_NE(proxy.logged().find("request body refused: chunk size is not a hex number"),
            std::string::npos)
      << proxy.logged();
}

TEST(ProxyServer, BadRequestsAreAnsweredAndClosed) {
  REQUIRE_TEST_NAMES();
  Proxy proxy;
  const auto status_of = [&](const std::string& request) {
    UniqueFd client = connect_loopback(proxy.http_port);
    std::thread writer([&] { write_all(client.get(), request); });
    const std::string answer = read_all(client.get());
    writer.join();
    return answer.substr(0, answer.find("\r\n"));
  };
  EXPECT_EQ(status_of(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 x\r\n\r\n", 17)),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_of("GET /index.html HTTP/1.1\r\nHost: origin.test\r\n\r\n"),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_of("GET https://origin.test/ HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_of("GET http://origin.test/ HTTP/3.0\r\n\r\n"),
            "HTTP/1.1 505 HTTP Version Not Supported");
  EXPECT_EQ(status_of("GET http://origin.test/" + std::string(1 << 20, 'a') + " HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 414 URI Too Long");
  std::string many_headers = "GET http://origin.test/ HTTP/1.1\r\n";
  while (many_headers.size() < 70000) many_headers += "X-Filler: " + std::string(200, 'x') + "\r\n";
  EXPECT_EQ(status_of(many_headers + "\r\n"), "HTTP/1.1 431 Request Header Fields Too Large");
  EXPECT_EQ(status_of("POST http://origin.test/ HTTP/1.1\r\nContent-Length: 1\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n"),
            "HTTP/1.1 400 Bad Request");
  EXPECT_TRUE(proxy.script->seen().empty());
}

TEST(ProxyServer, SlowHeadsAreClosed) {
  REQUIRE_TEST_NAMES();
  Proxy proxy([](ServerOptions& options) { options.head_timeout = std::chrono::seconds(1); });
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), "GET http://origin.test/ HTTP/1.1\r\nX-Slow:"));
  EXPECT_EQ(read_all(client.get()), "");  // closed by the proxy, never answered
  UniqueFd socks = connect_loopback(proxy.socks_port);
  ASSERT_TRUE(write_all(socks.get(), bytes({5, 2, 0})));  // truncated greeting
  EXPECT_EQ(read_all(socks.get()), "");
  EXPECT_TRUE(proxy.script->seen().empty());
}

// ---- SOCKS5 ----------------------------------------------------------------------------------

TEST(ProxyServer, Socks5DomainConnectTunnels) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  UniqueFd client = connect_loopback(proxy.socks_port);
  // Greeting and request in one write, with early data after them.
  ASSERT_TRUE(write_all(client.get(),
                        bytes({5, 2, 2, 0}) + socks_connect("origin.test", origin.port()) + "hi"));
  EXPECT_EQ(read_exactly(client.get(), 2), bytes({5, 0}));
  EXPECT_EQ(read_exactly(client.get(), 10), kSocksOk);
  EXPECT_EQ(read_exactly(client.get(), 2), "hi");
  ASSERT_TRUE(write_all(client.get(), "more"));
  EXPECT_EQ(read_exactly(client.get(), 4), "more");
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>{"origin.test:" + std::to_string(origin.port())});
}

TEST(ProxyServer, Socks5RefusalsAndUnsupportedRequests) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  proxy.script->answer = [](const std::string& host, auto) {
    return Decision{host != "other.test", "refused by test"};
  };
  const auto reply = [&](const std::string& request) {
    UniqueFd client = connect_loopback(proxy.socks_port);
    const std::string answer = socks_exchange(client.get(), request);
    EXPECT_EQ(read_all(client.get()), "");  // and closed
    return answer;
  };
  EXPECT_EQ(reply(bytes({5, 1, 0, 1, 127, 0, 0, 1, origin.port() >> 8, origin.port() & 0xff})),
            kSocksNotAllowed);
  EXPECT_EQ(reply(bytes({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 80})),
            kSocksNotAllowed);
  EXPECT_EQ(reply(bytes({5, 2, 0, 3, 11}) + "origin.test" + bytes({0, 80})),
            bytes({5, 7, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(reply(bytes({5, 3, 0, 1, 0, 0, 0, 0, 0, 0})), bytes({5, 7, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(reply(bytes({5, 1, 0, 9, 0, 0})), bytes({5, 8, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(reply(socks_connect("other.test", origin.port())), kSocksNotAllowed);
  EXPECT_EQ(reply(socks_connect("127.0.0.1", origin.port())), kSocksNotAllowed);
  EXPECT_EQ(reply(socks_connect("localhost", origin.port())), kSocksNotAllowed);
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>{"other.test:" + std::to_string(origin.port())});
  // No acceptable method.
  UniqueFd client = connect_loopback(proxy.socks_port);
  ASSERT_TRUE(write_all(client.get(), bytes({5, 1, 2})));
  EXPECT_EQ(read_all(client.get()), bytes({5, 0xff}));
  // Not SOCKS5 at all.
  UniqueFd v4 = connect_loopback(proxy.socks_port);
  ASSERT_TRUE(write_all(v4.get(), bytes({4, 1, 0, 80, 127, 0, 0, 1, 0})));
  EXPECT_EQ(read_all(v4.get()), "");
}

// ---- the per-command credential (macOS: listeners on the host's loopback) ---------------------

const ProxyCredential kCredential{"pi-sandbox", "0123456789abcdef0123456789abcdef"};

std::string with_authorization(const std::string& request_line_and_host, std::string_view value) {
  return request_line_and_host + "Proxy-Authorization: " + std::string(value) + "\r\n\r\n";
}

TEST(ProxyServer, WithACredentialAnHttpRequestWithoutItGets407AndNothingIsDecided) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy([](ServerOptions& options) { options.credential = kCredential; });
  const std::string target = "origin.test:" + std::to_string(origin.port());
  const std::string head = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
  const std::string right = "Basic " + base64(kCredential.username + ":" + kCredential.password);
  const std::string wrong_password =
      "Basic " + base64(kCredential.username + ":" + kCredential.password.substr(1) + "0");
  for (const std::string& request :
       {head + "\r\n", with_authorization(head, wrong_password),
        with_authorization(head, "Basic " + base64("other:" + kCredential.password)),
        with_authorization(head, "Bearer " + kCredential.password),
        with_authorization(head, right + "="), with_authorization(head, "Basic")}) {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), request));
    EXPECT_EQ(read_all(client.get()),
              "HTTP/1.1 407 Proxy Authentication Required\r\n"
              "Proxy-Authenticate: Basic realm=\"pi-sandbox\"\r\n"
              "Content-Type: text/plain\r\nContent-Length: 60\r\nConnection: close\r\n\r\n"
              "this proxy needs the credential in the command's proxy URLs\n")
        << request;
  }
  // Two Proxy-Authorization fields are refused, even when both are right.
  {
    UniqueFd client = connect_loopback(proxy.http_port);
    ASSERT_TRUE(write_all(client.get(), head + "Proxy-Authorization: " + right +
                                            "\r\nProxy-Authorization: " + right + "\r\n\r\n"));
    EXPECT_TRUE(read_all(client.get()).starts_with("HTTP/1.1 407 "));
  }
  EXPECT_TRUE(proxy.script->seen().empty());
  EXPECT_EQ(origin.accepted(), 0);
  EXPECT_NE(
      proxy.logged().find("CONNECT " + target +
                          " refused: the request does not carry the proxy's credential (407)"),
      std::string::npos)
      << proxy.logged();
  // The scheme in any case, with more than one space: allowed through.
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(
      write_all(client.get(), with_authorization(head, "bAsIc   " + right.substr(6)) + "through"));
  EXPECT_EQ(read_exactly(client.get(), kEstablished.size()), kEstablished);
  EXPECT_EQ(read_exactly(client.get(), 7), "through");
  EXPECT_EQ(proxy.script->seen(), std::vector<std::string>{target});
}

// pi-sandbox's own helper inside asks the host through the proxy (docs/ARCHITECTURE.md, "The
// channel of the credential helper"): a POST to the reserved name reaches the HostService with
// its path and whole body, never the Decider or a lookup; anything else to that name is refused.
TEST(ProxyServer, TheReservedNameReachesTheHostServiceAndNothingElse) {
  auto asked = std::make_shared<std::vector<std::string>>();
  Proxy proxy([asked](ServerOptions& options) {
    options.host_service = [asked](const std::string& path, const std::string& body) {
      asked->push_back(path + " " + body);
      return HostServiceAnswer{body == "give", body == "give" ? "username=u\n" : "no\n"};
    };
  });
  const auto ask = [&proxy](const std::string& request) {
    UniqueFd client = connect_loopback(proxy.http_port);
    EXPECT_TRUE(write_all(client.get(), request));
    return read_all(client.get());
  };
  const std::string post =
      "POST http://pi-sandbox.invalid/credential/get HTTP/1.1\r\nHost: "
      "pi-sandbox.invalid\r\nContent-Length: 4\r\n\r\n";
  EXPECT_EQ(ask(post + "give"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n"
            "Connection: close\r\n\r\nusername=u\n");
  EXPECT_EQ(ask(post + "keep"),
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\nno\n");
  EXPECT_TRUE(ask("GET http://pi-sandbox.invalid/credential/get HTTP/1.1\r\n\r\n")
                  .starts_with("HTTP/1.1 403 Forbidden\r\n"));
  EXPECT_TRUE(ask("POST http://pi-sandbox.invalid/x HTTP/1.1\r\nContent-Length: 65537\r\n\r\n")
                  .starts_with("HTTP/1.1 403 Forbidden\r\n"));
  EXPECT_EQ(*asked, (std::vector<std::string>{"/credential/get give", "/credential/get keep"}));
  EXPECT_TRUE(proxy.script->seen().empty());
  // Without a HostService (the default), the name is refused too.
  Proxy plain;
  UniqueFd client = connect_loopback(plain.http_port);
  ASSERT_TRUE(write_all(client.get(), post + "give"));
  EXPECT_TRUE(read_all(client.get()).starts_with("HTTP/1.1 403 Forbidden\r\n"));
  EXPECT_TRUE(plain.script->seen().empty());
}

TEST(ProxyServer, WithACredentialEachKeepAliveRequestCarriesIt) {
  REQUIRE_TEST_NAMES();
  Origin origin([](int fd) {
    while (!read_head(fd).empty()) write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
  });
  Proxy proxy([](ServerOptions& options) { options.credential = kCredential; });
  const std::string url = "http://origin.test:" + std::to_string(origin.port()) + "/";
  const std::string right = "Basic " + base64(userinfo(kCredential));
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(
      write_all(client.get(),
                with_authorization("GET " + url + " HTTP/1.1\r\nHost: origin.test\r\n", right)));
  EXPECT_EQ(read_head(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
  EXPECT_EQ(read_exactly(client.get(), 2), "ok");
  ASSERT_TRUE(write_all(client.get(), "GET " + url + " HTTP/1.1\r\nHost: origin.test\r\n\r\n"));
  EXPECT_TRUE(read_all(client.get()).starts_with("HTTP/1.1 407 Proxy Authentication Required\r\n"));
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>{"origin.test:" + std::to_string(origin.port())});
}

TEST(ProxyServer, WithACredentialSocks5NeedsTheUsernamePasswordMethod) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy([](ServerOptions& options) { options.credential = kCredential; });
  const auto userpass = [](const std::string& user, const std::string& password) {
    return bytes({1, static_cast<int>(user.size())}) + user +
           bytes({static_cast<int>(password.size())}) + password;
  };
  // No authentication offered only: no acceptable method.
  {
    UniqueFd client = connect_loopback(proxy.socks_port);
    ASSERT_TRUE(write_all(client.get(), bytes({5, 1, 0})));
    EXPECT_EQ(read_all(client.get()), bytes({5, 0xff}));
  }
  // A wrong password, a wrong user, a wrong sub-negotiation version: STATUS 1, closed.
  for (const std::string& attempt :
       {userpass(kCredential.username, kCredential.password.substr(0, 31) + "0"),
        userpass("pi-sandboX", kCredential.password), userpass("", ""),
        bytes({5, 10}) + kCredential.username}) {
    UniqueFd client = connect_loopback(proxy.socks_port);
    ASSERT_TRUE(write_all(client.get(), bytes({5, 2, 0, 2}) + attempt));
    EXPECT_EQ(read_exactly(client.get(), 2), bytes({5, 2}));
    EXPECT_EQ(read_all(client.get()), bytes({1, 1}));
  }
  EXPECT_TRUE(proxy.script->seen().empty());
  EXPECT_EQ(origin.accepted(), 0);
  // The right one, in one write with the request and early data.
  UniqueFd client = connect_loopback(proxy.socks_port);
  ASSERT_TRUE(write_all(client.get(), bytes({5, 2, 0, 2}) +
                                          userpass(kCredential.username, kCredential.password) +
                                          socks_connect("origin.test", origin.port()) + "hi"));
  EXPECT_EQ(read_exactly(client.get(), 2), bytes({5, 2}));
  EXPECT_EQ(read_exactly(client.get(), 2), bytes({1, 0}));
  EXPECT_EQ(read_exactly(client.get(), 10), kSocksOk);
  EXPECT_EQ(read_exactly(client.get(), 2), "hi");
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>{"origin.test:" + std::to_string(origin.port())});
}

// Runs `command` with /bin/sh and returns its stdout and exit status.
std::pair<std::string, int> run_shell(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

// A real client: curl sends the credential of its proxy URL as Proxy-Authorization (HTTP, plain
// and through CONNECT) and with RFC 1929 (socks5h); without it, or with a wrong one, it gets the
// 407 or fails, and nothing is decided.
TEST(ProxyServer, CurlWithTheCredentialInItsProxyUrlGetsThroughAndWithoutItDoesNot) {
  REQUIRE_TEST_NAMES();
  PI_SANDBOX_REQUIRE(run_shell("command -v curl >/dev/null 2>&1").second == 0,
                     "curl is not installed");
  Origin origin([](int fd) {
    while (!read_head(fd).empty())
      write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\norigin");
  });
  Proxy proxy([](ServerOptions& options) { options.credential = kCredential; });
  const std::string url = "http://origin.test:" + std::to_string(origin.port()) + "/";
  const std::string credential = userinfo(kCredential) + "@";
  const std::string http = "http://" + credential + "127.0.0.1:" + std::to_string(proxy.http_port);
  const std::string socks =
      "socks5h://" + credential + "127.0.0.1:" + std::to_string(proxy.socks_port);
  const std::string curl = "curl -sS --max-time 20 -o - -w ' %{http_code}' ";
  EXPECT_EQ(run_shell(curl + "-x " + http + " " + url),
            (std::pair<std::string, int>{"origin 200", 0}));
  EXPECT_EQ(run_shell(curl + "-p -x " + http + " " + url),
            (std::pair<std::string, int>{"origin 200", 0}));  // through CONNECT
  EXPECT_EQ(run_shell(curl + "-x " + socks + " " + url),
            (std::pair<std::string, int>{"origin 200", 0}));
  const std::string bare_http = "http://127.0.0.1:" + std::to_string(proxy.http_port);
  const std::string bare_socks = "socks5h://127.0.0.1:" + std::to_string(proxy.socks_port);
  const auto without = run_shell(curl + "-x " + bare_http + " " + url + " 2>/dev/null");
  EXPECT_EQ(without.first.substr(without.first.size() - 4), " 407");
  EXPECT_NE(run_shell(curl + "-p -x " + bare_http + " " + url + " 2>/dev/null").second, 0);
  EXPECT_NE(run_shell(curl + "-x " + bare_socks + " " + url + " 2>/dev/null").second, 0);
  const std::string wrong =
      "socks5h://pi-sandbox:wrong@127.0.0.1:" + std::to_string(proxy.socks_port);
  EXPECT_NE(run_shell(curl + "-x " + wrong + " " + url + " 2>/dev/null").second, 0);
  EXPECT_EQ(proxy.script->seen(),
            std::vector<std::string>(3, "origin.test:" + std::to_string(origin.port())));
}

// ---- decisions that take long ----------------------------------------------------------------

TEST(ProxyServer, APendingDecisionDoesNotStallOtherConnections) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  auto slow = std::make_shared<Latch>();
  auto asked = std::make_shared<Latch>();
  proxy.script->answer = [slow, asked](const std::string& host, auto) {
    if (host == "other.test") {
      asked->release();
      slow->wait();  // a human who takes their time
      return Decision{false, "too late"};
    }
    return Decision{true, ""};
  };
  const std::string port = std::to_string(origin.port());
  UniqueFd waiting = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(waiting.get(), connect_request("other.test:" + port)));
  ASSERT_TRUE(asked->wait());
  // While that decision is pending, another connection is decided, tunnels and ends.
  UniqueFd client = connect_loopback(proxy.socks_port);
  EXPECT_EQ(socks_exchange(client.get(), socks_connect("origin.test", origin.port())), kSocksOk);
  ASSERT_TRUE(write_all(client.get(), "ping"));
  EXPECT_EQ(read_exactly(client.get(), 4), "ping");
  slow->release();
  EXPECT_EQ(read_all(waiting.get()), blocked_response());
}

TEST(ProxyServer, ADecisionThatTimesOutIsARefusal) {
  REQUIRE_TEST_NAMES();
  Proxy proxy([](ServerOptions& options) { options.decision_timeout = std::chrono::seconds(1); });
  auto never = std::make_shared<Latch>();
  proxy.script->answer = [never](const auto&, auto) {
    never->wait();
    return Decision{true, ""};
  };
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("origin.test:80")));
  EXPECT_EQ(read_all(client.get()), blocked_response());
  EXPECT_NE(proxy.logged().find("no decision within 1 s"), std::string::npos) << proxy.logged();
  never->release();
}

TEST(ProxyServer, ADecisionTimeoutOfZeroWaitsForTheDecision) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy([](ServerOptions& options) { options.decision_timeout = std::chrono::seconds(0); });
  auto asked = std::make_shared<Latch>();
  auto answer = std::make_shared<Latch>();
  proxy.script->answer = [asked, answer](const auto&, auto) {
    asked->release();
    answer->wait();
    return Decision{true, ""};
  };
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(
      write_all(client.get(), connect_request("origin.test:" + std::to_string(origin.port()))));
  ASSERT_TRUE(asked->wait());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a human who takes a moment
  answer->release();
  EXPECT_EQ(read_exactly(client.get(), kEstablished.size()), kEstablished);
  EXPECT_EQ(proxy.logged().find("no decision within"), std::string::npos) << proxy.logged();
}

TEST(ProxyServer, StopWithAPendingDecisionReturnsAndRefuses) {
  REQUIRE_TEST_NAMES();
  Proxy proxy;
  auto never = std::make_shared<Latch>();
  auto asked = std::make_shared<Latch>();
  proxy.script->answer = [never, asked](const auto&, auto) {
    asked->release();
    never->wait();
    return Decision{true, ""};
  };
  UniqueFd http = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(http.get(), connect_request("origin.test:80")));
  ASSERT_TRUE(asked->wait());
  UniqueFd socks = connect_loopback(proxy.socks_port);
  ASSERT_TRUE(write_all(socks.get(), bytes({5, 1, 0}) + socks_connect("other.test", 80)));
  EXPECT_EQ(read_exactly(socks.get(), 2), bytes({5, 0}));
  for (int i = 0; i < 1000 && proxy.script->seen().size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(proxy.script->seen().size(), 2u);
  // Both decisions are pending (the decider never answers); stop() must not wait for them.
  proxy.server->stop();
  EXPECT_EQ(read_all(http.get()), blocked_response());
  EXPECT_EQ(read_all(socks.get()), kSocksNotAllowed);
  proxy.server->stop();  // idempotent
  proxy.server.reset();
  // The listeners are closed.
  UniqueFd late(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(proxy.http_port);
  EXPECT_NE(::connect(late.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  never->release();
}

TEST(ProxyServer, StopClosesOpenTunnels) {
  REQUIRE_TEST_NAMES();
  Origin origin(echo);
  Proxy proxy;
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(
      write_all(client.get(), connect_request("origin.test:" + std::to_string(origin.port()))));
  EXPECT_EQ(read_exactly(client.get(), kEstablished.size()), kEstablished);
  proxy.server->stop();
  EXPECT_EQ(read_all(client.get()), "");
}

TEST(ProxyServer, StopWhileConnectingReturnsAndClosesTheClient) {
  REQUIRE_TEST_NAMES();
  Stalled stalled = stalled_listener("127.0.0.3");
  Proxy proxy([](ServerOptions& options) { options.connect_timeout = std::chrono::seconds(60); });
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(),
                        connect_request("stalled.test:" + std::to_string(stalled.listener.port))));
  for (int i = 0; i < 1000 && proxy.script->seen().empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(proxy.script->seen().size(), 1u);  // decided: the attempt is (about to be) made
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  proxy.server->stop();  // returns although the attempt would wait 60 s
  EXPECT_EQ(read_all(client.get()), "");
  EXPECT_TRUE(proxy.reported().empty());  // the command ended: no unreachable line
}

TEST(ProxyServer, WithoutADeciderEverythingIsRefused) {
  REQUIRE_TEST_NAMES();
  Proxy proxy([](ServerOptions& options) { options.decide = nullptr; });
  UniqueFd client = connect_loopback(proxy.http_port);
  ASSERT_TRUE(write_all(client.get(), connect_request("origin.test:80")));
  EXPECT_EQ(read_all(client.get()), blocked_response());
}

TEST(ProxyServer, ProductionAddressFilterRefusesLocalAddresses) {
  const AddressFilter filter = public_address_filter({*IpAddress::parse("192.0.2.7")});
  std::string why;
  EXPECT_FALSE(filter(asio::ip::make_address("127.0.0.1"), why));
  EXPECT_EQ(why, "127.0.0.1, which is loopback");
  EXPECT_FALSE(filter(asio::ip::make_address("::ffff:169.254.169.254"), why));
  EXPECT_EQ(why, "::ffff:169.254.169.254, which is link-local (IPv4-mapped)");
  EXPECT_FALSE(filter(asio::ip::make_address("192.0.2.7"), why));
  EXPECT_EQ(why, "192.0.2.7, an address of this host");
  EXPECT_TRUE(filter(asio::ip::make_address("203.0.113.9"), why));
  EXPECT_TRUE(filter(asio::ip::make_address("2001:4860:4860::8888"), why));
}

}  // namespace
}  // namespace pisandbox::proxy
