// `pi-sandbox proxy-connect HOST PORT`: an SSH ProxyCommand for use inside the sandbox. It
// asks the command's SOCKS5 listener for a CONNECT to HOST:PORT by name (RFC 1928, address type
// 0x03) and relays stdin/stdout over it, so SSH remotes go through the same policy and approvals
// as everything else (docs/network.md; docs/cases.md, C-08). The listener is the one ALL_PROXY
// names when it is `socks5h://[user:password@]127.0.0.1:PORT` (macOS: a port of its own and the
// per-command credential, sent with RFC 1929), else 127.0.0.1:1080 without authentication (the
// Linux sandbox's).
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/proxy_environment.hpp"

namespace pisandbox::cli {

namespace {

bool read_exactly(int fd, unsigned char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// RFC 1928 §6 reply codes, in words.
std::string reply_text(unsigned code) {
  switch (code) {
    case 0x01:
      return "general failure";
    case 0x02:
      return "refused by the sandbox's network policy";
    case 0x03:
      return "network unreachable";
    case 0x04:
      return "host unreachable";
    case 0x05:
      return "connection refused";
    case 0x06:
      return "TTL expired";
    case 0x07:
      return "command not supported";
    case 0x08:
      return "address type not supported";
    default:
      return "reply " + std::to_string(code);
  }
}

/// Relays stdin → socket and socket → stdout until both directions have ended; an end of
/// stdin becomes a half-close of the socket, so the server still sends what it has.
int relay(int sock) {
  bool in_open = true, out_open = true;
  char buffer[65536];
  while (out_open) {
    pollfd fds[2] = {{in_open ? STDIN_FILENO : -1, POLLIN, 0}, {sock, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (in_open && fds[0].revents != 0) {
      const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (n > 0) {
        if (!core::write_all(sock, std::string_view(buffer, static_cast<std::size_t>(n)))) return 1;
      } else if (n == 0 || errno != EINTR) {
        in_open = false;
        ::shutdown(sock, SHUT_WR);
      }
    }
    if (fds[1].revents != 0) {
      const ssize_t n = ::read(sock, buffer, sizeof buffer);
      if (n > 0) {
        if (!core::write_all(STDOUT_FILENO, std::string_view(buffer, static_cast<std::size_t>(n))))
          return 1;
      } else if (n == 0 || errno != EINTR) {
        out_open = false;
      }
    }
  }
  return 0;
}

/// The command's SOCKS5 listener: its port on 127.0.0.1 and the credential (both empty: none).
struct SocksListener {
  std::uint16_t port = policy::kLinuxSocksProxyPort;
  std::string username;
  std::string password;
};

/// The listener ALL_PROXY names when it is exactly `socks5h://[user:password@]127.0.0.1:PORT`
/// (what the macOS runner sets), else the Linux sandbox's 127.0.0.1:1080.
SocksListener socks_listener_from_environment() {
  const char* value = std::getenv("ALL_PROXY");
  const auto proxy = value == nullptr
                         ? std::nullopt
                         : policy::loopback_proxy_from_url(value, policy::ProxyScheme::Socks5h);
  if (!proxy) return {};
  // RFC 1929 section 2: the username and the password are 1-byte-length-prefixed.
  const std::string_view info = proxy->userinfo;
  const auto colon = info.find(':');
  const std::string_view user = info.substr(0, colon);
  const std::string_view password =
      colon == std::string_view::npos ? std::string_view() : info.substr(colon + 1);
  if (user.size() > 255 || password.size() > 255) return {};
  return SocksListener{proxy->port, std::string(user), std::string(password)};
}

/// What proxy-connect sends in one write: the greeting (version 5, one method: no
/// authentication, or username/password when `listener` has a credential, RFC 1929, followed by
/// it), then CONNECT to `host` by name (RFC 1928 section 4, ATYP 3).
std::string socks_request(const SocksListener& listener, const std::string& host, int port) {
  const bool credential = !listener.username.empty() || !listener.password.empty();
  std::string request = {5, 1, static_cast<char>(credential ? 2 : 0)};
  if (credential) {
    request += static_cast<char>(1);
    request += static_cast<char>(listener.username.size());
    request += listener.username;
    request += static_cast<char>(listener.password.size());
    request += listener.password;
  }
  request += std::string{5, 1, 0, 3, static_cast<char>(host.size())};
  request += host;
  request += static_cast<char>(port >> 8);
  request += static_cast<char>(port & 0xff);
  return request;
}

int proxy_connect(const std::string& host, int port) {
  if (host.empty() || host.size() > 255) {
    print_error("proxy-connect: the host name must be 1 to 255 bytes");
    return 2;
  }
  const SocksListener listener = socks_listener_from_environment();
  const std::string where = "127.0.0.1:" + std::to_string(listener.port);
  core::UniqueFd sock(::socket(AF_INET, SOCK_STREAM, 0));  // no SOCK_CLOEXEC on Apple
  if (sock) (void)::fcntl(sock.get(), F_SETFD, FD_CLOEXEC);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(listener.port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!sock || ::connect(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    print_error("proxy-connect: cannot reach the sandbox's SOCKS5 proxy at " + where + ": " +
                std::strerror(errno) + "\nhint: proxy-connect works inside `pi-sandbox run`");
    return 1;
  }
  const bool credential = !listener.username.empty() || !listener.password.empty();
  const std::string request = socks_request(listener, host, port);
  if (!core::write_all(sock.get(), request)) {
    print_error("proxy-connect: the SOCKS5 proxy closed the connection");
    return 1;
  }
  unsigned char method[2], status[2], reply[4];
  if (!read_exactly(sock.get(), method, 2) || method[0] != 5) {
    print_error("proxy-connect: " + where + " gave no SOCKS5 answer (ALL_PROXY names it)");
    return 1;
  }
  if (method[1] != (credential ? 2 : 0)) {
    print_error("proxy-connect: the SOCKS5 proxy at " + where +
                (credential ? " takes no username and password, but ALL_PROXY gives them"
                            : " wants a username and password, and ALL_PROXY gives none"));
    return 1;
  }
  if (credential && (!read_exactly(sock.get(), status, 2) || status[1] != 0)) {
    print_error("proxy-connect: the SOCKS5 proxy at " + where +
                " refused the credential in ALL_PROXY");
    return 1;
  }
  if (!read_exactly(sock.get(), reply, 4) || reply[0] != 5) {
    print_error("proxy-connect: the SOCKS5 proxy gave no valid answer");
    return 1;
  }
  if (reply[1] != 0) {
    print_error("proxy-connect: " + host + ":" + std::to_string(port) + ": " +
                reply_text(reply[1]));
    return 1;
  }
  // The bound address: IPv4 (4), domain (length-prefixed) or IPv6 (16), then the port.
  unsigned char skip[258];
  std::size_t rest = reply[3] == 1 ? 4 : reply[3] == 4 ? 16 : 0;
  if (reply[3] == 3) {
    if (!read_exactly(sock.get(), skip, 1)) return 1;
    rest = skip[0];
  }
  if (!read_exactly(sock.get(), skip, rest + 2)) return 1;
  return relay(sock.get());
}

}  // namespace

void add_proxy_connect_command(CLI::App& app, int& exit_code) {
  auto host = std::make_shared<std::string>();
  auto port = std::make_shared<int>(0);
  CLI::App* cmd =
      app.add_subcommand("proxy-connect",
                         "Inside the sandbox: relay stdin/stdout to HOST:PORT through the proxy "
                         "(an SSH ProxyCommand)");
  cmd->add_option("HOST", *host, "Destination host name")->required();
  cmd->add_option("PORT", *port, "Destination TCP port")->required()->check(CLI::Range(1, 65535));
  cmd->callback([host, port, &exit_code] { exit_code = proxy_connect(*host, *port); });
}

}  // namespace pisandbox::cli
