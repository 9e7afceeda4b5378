// `pi-sandbox credential-helper get|store|erase`: git's credential helper inside the sandbox
// (git-credential(1), "CUSTOM HELPERS"; docs/network.md, "Credentials for HTTPS"). The sandbox
// sets it as the only `credential.helper` of the command's git. `get` sends what git asks for
// (protocol, host, path, username: nothing else) to pi-sandbox on the host through the command's
// own HTTP proxy, as `POST http://pi-sandbox.invalid/credential/get` (the channel that already
// crosses the boundary: docs/ARCHITECTURE.md, "The channel of the credential helper"), and prints
// the username and password it gets back; a refusal is one `pi-sandbox: credential: refused ...`
// line on stderr and `quit=1` for git, so that git neither asks another helper nor prompts.
// `store` and `erase` are ignored (their input read and dropped, exit 0): the credential lives in
// the host's own helper, which only the host's git changes.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "cli/commands.hpp"
#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "policy/git_credential.hpp"
#include "policy/proxy_environment.hpp"
#include "proxy/protocol/credential.hpp"
#include "proxy/server.hpp"

namespace pisandbox::cli {

namespace {

/// The command's HTTP proxy: its port on 127.0.0.1 and its credential (`user:password`, empty:
/// none).
struct HttpListener {
  std::uint16_t port = policy::kLinuxHttpProxyPort;
  std::string userinfo;
};

/// The listener HTTP_PROXY names when it is exactly `http://[user:password@]127.0.0.1:PORT`
/// (what the sandbox sets; macOS: a port of its own and the per-command credential), else the
/// Linux sandbox's 127.0.0.1:3128.
HttpListener http_listener_from_environment() {
  const char* value = std::getenv("HTTP_PROXY");
  const auto proxy = value == nullptr
                         ? std::nullopt
                         : policy::loopback_proxy_from_url(value, policy::ProxyScheme::Http);
  if (!proxy) return {};
  return HttpListener{proxy->port, proxy->userinfo};
}

std::string read_stdin() {
  std::string input;
  char buffer[4096];
  while (input.size() <= policy::kMaxCredentialMessageBytes) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    input.append(buffer, static_cast<std::size_t>(n));
  }
  return input;
}

/// The request to pi-sandbox on the host.
std::string host_request(const HttpListener& listener, const std::string& body) {
  std::string head =
      "POST http://" + std::string(proxy::kHostServiceHost) +
      "/credential/get HTTP/1.1\r\nHost: " + std::string(proxy::kHostServiceHost) +
      "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n";
  if (!listener.userinfo.empty())
    head += "Proxy-Authorization: Basic " + proxy::base64(listener.userinfo) + "\r\n";
  return head + "\r\n" + body;
}

/// The whole answer of the proxy (it closes the connection after it), or an error.
core::Result<std::string> ask_host(const HttpListener& listener, const std::string& request) {
  const std::string where = "127.0.0.1:" + std::to_string(listener.port);
  core::UniqueFd sock(::socket(AF_INET, SOCK_STREAM, 0));
  if (sock) (void)::fcntl(sock.get(), F_SETFD, FD_CLOEXEC);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(listener.port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!sock || ::connect(sock.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    return std::unexpected(
        core::Error{"credential-helper: cannot reach the sandbox's proxy at " + where + ": " +
                        std::strerror(errno),
                    "hint: credential-helper works inside `pi-sandbox run` and `serve`", errno});
  if (!core::write_all(sock.get(), request))
    return std::unexpected(
        core::Error{"credential-helper: the proxy at " + where + " closed the connection", {}, 0});
  std::string answer;
  char buffer[4096];
  while (answer.size() <= 2 * policy::kMaxCredentialMessageBytes) {
    const ssize_t n = ::read(sock.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  return answer;
}

/// Prints the refusal for the user and tells git to stop (git-credential(1): `quit`).
int refused(const std::string& line) {
  print_error(line);
  std::cout << "quit=1\n" << std::flush;
  return 0;
}

int credential_get() {
  const auto attributes = policy::parse_credential_message(read_stdin());
  if (!attributes) return refused("credential-helper: " + attributes.error().message);
  const auto query = policy::credential_query(*attributes);
  if (!query) return refused("credential-helper: " + query.error().message);
  const HttpListener listener = http_listener_from_environment();
  const auto answer =
      ask_host(listener, host_request(listener, policy::credential_message(*query)));
  if (!answer) {
    print_error(answer.error().describe());
    return 1;
  }
  const std::size_t end = answer->find("\r\n\r\n");
  const std::string status = answer->substr(0, answer->find("\r\n"));
  const std::string body = end == std::string::npos ? "" : answer->substr(end + 4);
  if (!status.starts_with("HTTP/1.1 200 ")) {
    const std::string line = body.substr(0, body.find('\n'));
    return refused(line.empty() ? "credential-helper: the proxy answered " + status : line);
  }
  const auto lines = policy::parse_credential_message(body);
  const auto credential = lines ? policy::credential_answer(*lines, *query) : std::nullopt;
  if (!credential) return refused("credential-helper: the host's answer holds no credential");
  std::cout << policy::credential_lines(*credential) << std::flush;
  return 0;
}

}  // namespace

void add_credential_helper_command(CLI::App& app, int& exit_code) {
  auto action = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "credential-helper",
      "Inside the sandbox: git's credential helper, asking pi-sandbox on the host (get; store "
      "and erase are ignored)");
  cmd->add_option("ACTION", *action, "get, store or erase (git-credential(1))")
      ->required()
      ->check(CLI::IsMember({"get", "store", "erase"}));
  cmd->callback([action, &exit_code] {
    if (*action == "get") {
      exit_code = credential_get();
      return;
    }
    (void)read_stdin();  // store, erase: the host's helper keeps the credential
    exit_code = 0;
  });
}

}  // namespace pisandbox::cli
