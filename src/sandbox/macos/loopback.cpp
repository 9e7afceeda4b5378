// The proxy's listeners on 127.0.0.1 (loopback.hpp).
#include "sandbox/macos/loopback.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <string>

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

}  // namespace pisandbox::sandbox::macos
