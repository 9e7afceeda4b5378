// pisandbox::sandbox::linux_ — the Unix-socket broker: the supervisor's side of every bind()
// and connect() of a sandboxed command (docs/security.md, "Unix sockets").
//
// The command's seccomp filter stops each call (SECCOMP_RET_USER_NOTIF; kernel document
// Documentation/userspace-api/seccomp_filter.rst). The supervisor never lets the stopped call
// continue, because the command could change its arguments after they were checked (the
// document's warning): it takes its own copy of the socket (pidfd_getfd) and of the address
// (process_vm_readv), and the call is made on those:
//   - not a Unix socket, an abstract name (its network namespace is the sandbox's), or a bind:
//     by the helper inside the sandbox (unix_wire.hpp), exactly as the command would have
//     made it; the inode of every socket file the sandbox binds outside its private tmpfs is
//     recorded (SIOCUNIXFILE) and held open, so its number cannot pass to a host socket;
//   - a connect to a socket file: the helper resolves the path once (O_PATH) and the
//     supervisor looks at that inode: one the sandbox bound (on a private tmpfs, or recorded)
//     is connected to by the helper through that very descriptor; any other is the host's.
//   - a host socket (also a path that does not exist inside, e.g. in the hidden home or the
//     host's /tmp): the supervisor opens the same absolute path on the host, and asks the
//     sandbox::HostSocketDecider about the path it really leads to; allowed, it connects a socket
//     of its own to that inode and puts it in the command's descriptor table in place of the
//     command's socket (SECCOMP_IOCTL_NOTIF_ADDFD); refused, the call fails with EACCES.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/unique_fd.hpp"
#include "sandbox/command.hpp"

namespace pisandbox::sandbox::linux_ {

/// The rules for a command that shares the host's network namespace (docs/security.md, "Where
/// namespaces cannot be made"), which the broker applies before anything else to the address it
/// copied (so nothing the command changes after the check reaches the kernel):
///   shared: false for the namespaces' sandbox (nothing of this applies);
///   proxy_ports: the ports (host byte order) of the proxy's listeners on 127.0.0.1, the only
///     inet destination a connect() may name (AF_UNSPEC, which disconnects, is let through);
///     any other: EACCES;
///   bind of an inet socket: a loopback address only (127.0.0.0/8, ::1), else EACCES;
///   abstract_scoped: Landlock scopes abstract Unix sockets to the command (ABI 6); otherwise a
///     connect() or bind() to an abstract name, which would be the host's, fails with EACCES.
struct HostNetwork {
  bool shared = false;
  std::vector<std::uint16_t> proxy_ports = {};
  bool abstract_scoped = false;
};

/// What pid 1's command sends before exec (LaunchMessage::UnixBroker).
///   helper: the helper's channel; listener: the seccomp notification listener;
///   private_devices: st_dev of the sandbox's private tmpfs mounts;
///   host_network: set by the runner where the command shares the host's network.
struct UnixBrokerChannels {
  core::UniqueFd helper;
  core::UniqueFd listener;
  std::vector<dev_t> private_devices;
  HostNetwork host_network = {};
};

/// The broker of one command: one thread receives the notifications, one thread per call
/// (at most kMaxCalls at once; more wait for one of them) makes it. Destroying the handle stops
/// receiving; calls still being made finish on their own (they hold what they use).
class UnixBroker {
 public:
  /// Calls made at once, at most.
  static constexpr int kMaxCalls = 64;
  /// Socket files bound outside the private tmpfs that are remembered, at most; past that a
  /// connection to a further one is decided as a host socket's (fail closed).
  static constexpr std::size_t kMaxBound = 512;

  /// Starts the broker; `decide` answers about host sockets (empty: every one is refused).
  static std::unique_ptr<UnixBroker> start(UnixBrokerChannels channels,
                                           sandbox::HostSocketDecider decide);
  ~UnixBroker();
  UnixBroker(const UnixBroker&) = delete;
  UnixBroker& operator=(const UnixBroker&) = delete;

  struct State;

 private:
  explicit UnixBroker(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace pisandbox::sandbox::linux_
