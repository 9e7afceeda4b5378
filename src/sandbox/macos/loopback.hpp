// pisandbox::sandbox::macos — the proxy's listeners on the host's loopback (portable POSIX
// sockets; built and tested on every platform). Without a network namespace the command reaches
// its proxy on the host's own 127.0.0.1, at ports the kernel chooses for each command
// (docs/macos.md), which is why the proxy then asks every client for the command's credential.
#pragma once

#include <cstdint>

#include "core/error.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::macos {

/// A listening TCP socket on 127.0.0.1.
///   fd:   the socket, close-on-exec, listening with a backlog of kLoopbackBacklog.
///   port: the port the kernel chose (1-65535), in host byte order.
struct LoopbackListener {
  core::UniqueFd fd;
  std::uint16_t port = 0;
};

/// How many connections not yet accepted a listener holds (listen(2)'s backlog).
inline constexpr int kLoopbackBacklog = 128;

/// Opens a TCP socket, binds it to 127.0.0.1 port 0 (no SO_REUSEADDR: the port stays this
/// socket's alone), listens, and reads back the port the kernel chose with getsockname(2).
/// Errors name the call and errno: `socket(AF_INET, SOCK_STREAM)`, `fcntl(FD_CLOEXEC)`,
/// `bind(127.0.0.1:0)`, `listen(127.0.0.1:<port>)`, `getsockname()`.
core::Result<LoopbackListener> open_loopback_listener();

}  // namespace pisandbox::sandbox::macos
