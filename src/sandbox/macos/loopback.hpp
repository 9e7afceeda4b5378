// pisandbox::sandbox::macos — the proxy's listeners on the host's loopback (portable POSIX
// sockets; built and tested on every platform). Without a network namespace the command reaches
// its proxy on the host's own 127.0.0.1, at ports the kernel chooses for each command
// (docs/macos.md), which is why the proxy then asks every client for the command's credential.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "policy/proxy_environment.hpp"
#include "policy/sandbox_policy.hpp"
#include "proxy/protocol/credential.hpp"
#include "sandbox/command.hpp"

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

/// The proxy's listeners on the host's loopback and the credential its clients must present
/// (also the Linux sandbox's where no network namespace can be made: docs/security.md, "Where
/// namespaces cannot be made").
struct LoopbackProxy {
  LoopbackListener http;
  LoopbackListener socks;
  proxy::ProxyCredential credential;
};

/// Both listeners (HTTP, then SOCKS5) and a fresh credential. Errors: the listener's call, or
/// `generate_credential(): <what>` when the random source fails.
core::Result<LoopbackProxy> open_loopback_proxy();

/// Starts `options.proxy` on both listeners with the credential (they are the proxy's from
/// then on). Without a proxy nothing happens: the listeners stay with `loopback`, open and never
/// accepted. Errors: what the starter threw (a thread that could not be created).
core::Result<std::shared_ptr<void>> start_loopback_proxy(const RunOptions& options,
                                                         LoopbackProxy& loopback);

/// `env` ("NAME=value" strings) less its proxy variables, then policy::proxy_environment() for
/// `endpoints` (the loopback ports and the credential), its JAVA_TOOL_OPTIONS merged with the
/// caller's part of the old one.
std::vector<std::string> with_proxy_environment(const std::vector<std::string>& env,
                                                const policy::SandboxPolicy& policy,
                                                const policy::ProxyEndpoints& endpoints);

}  // namespace pisandbox::sandbox::macos
