// The proxy's listeners on 127.0.0.1 (loopback.hpp).
#include "sandbox/macos/loopback.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace pisandbox::sandbox::macos {

namespace {

/// A TCP socket that a spawned command does not inherit. Where the kernel takes SOCK_CLOEXEC
/// (Linux) it is set atomically; elsewhere (macOS has no SOCK_CLOEXEC) right after socket(2),
/// and the launcher spawns with POSIX_SPAWN_CLOEXEC_DEFAULT, which closes it anyway.
core::Result<core::UniqueFd> tcp_socket() {
#ifdef SOCK_CLOEXEC
  core::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return core::fail_errno("socket(AF_INET, SOCK_STREAM)");
#else
  core::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  if (!fd) return core::fail_errno("socket(AF_INET, SOCK_STREAM)");
  if (::fcntl(fd.get(), F_SETFD, FD_CLOEXEC) != 0) return core::fail_errno("fcntl(FD_CLOEXEC)");
#endif
  return fd;
}

constexpr std::string_view kJavaToolOptions = "JAVA_TOOL_OPTIONS";

std::string_view name_of(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

/// The caller's part of a JAVA_TOOL_OPTIONS that policy::command_environment() merged with the
/// Linux proxy options (`<caller's> <java_proxy_options({})>`, or those alone): nullopt when
/// there is none.
std::optional<std::string> caller_java_options(std::string_view value) {
  const std::string linux_options = policy::java_proxy_options({});
  if (value == linux_options) return std::nullopt;
  if (value.ends_with(" " + linux_options)) value.remove_suffix(linux_options.size() + 1);
  return std::string(value);
}

/// pi-sandbox's own path, as the policy protects it (the SSH ProxyCommand runs it).
std::filesystem::path self_executable(const policy::SandboxPolicy& policy) {
  for (const auto& p : policy.protected_paths)
    if (p.reason == policy::ProtectReason::SandboxBinary) return p.path;
  return "pi-sandbox";
}

}  // namespace

core::Result<LoopbackListener> open_loopback_listener() {
  auto fd = tcp_socket();
  if (!fd) return std::unexpected(fd.error());
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd->get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
    return core::fail_errno("bind(127.0.0.1:0)");
  socklen_t length = sizeof address;
  if (::getsockname(fd->get(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return core::fail_errno("getsockname()");
  const std::uint16_t port = ntohs(address.sin_port);
  if (::listen(fd->get(), kLoopbackBacklog) != 0)
    return core::fail_errno("listen(127.0.0.1:" + std::to_string(port) + ")");
  return LoopbackListener{std::move(*fd), port};
}

core::Result<LoopbackProxy> open_loopback_proxy() {
  LoopbackProxy out;
  auto http = open_loopback_listener();
  if (!http) return std::unexpected(http.error());
  auto socks = open_loopback_listener();
  if (!socks) return std::unexpected(socks.error());
  out.http = std::move(*http);
  out.socks = std::move(*socks);
  try {
    out.credential = proxy::generate_credential();
  } catch (const std::exception& e) {
    return core::fail(std::string("generate_credential(): ") + e.what());
  }
  return out;
}

core::Result<std::shared_ptr<void>> start_loopback_proxy(const RunOptions& options,
                                                         LoopbackProxy& loopback) {
  if (!options.proxy) return nullptr;
  ProxyListeners listeners;
  listeners.http.push_back(std::move(loopback.http.fd));
  listeners.socks.push_back(std::move(loopback.socks.fd));
  listeners.username = loopback.credential.username;
  listeners.password = loopback.credential.password;
  try {
    return options.proxy(std::move(listeners));
  } catch (const std::exception& e) {
    return core::fail(e.what());
  }
}

std::vector<std::string> with_proxy_environment(const std::vector<std::string>& env,
                                                const policy::SandboxPolicy& policy,
                                                const policy::ProxyEndpoints& endpoints) {
  std::vector<std::string> out;
  std::optional<std::string> java_options;
  for (const auto& entry : env) {
    const std::string_view name = name_of(entry);
    if (name == kJavaToolOptions && entry.size() > name.size())
      java_options = caller_java_options(std::string_view(entry).substr(name.size() + 1));
    if (!policy::is_proxy_variable(name)) out.push_back(entry);
  }
  for (auto& variable : policy::proxy_environment(self_executable(policy), java_options, endpoints))
    out.push_back(std::move(variable));
  return out;
}

}  // namespace pisandbox::sandbox::macos
