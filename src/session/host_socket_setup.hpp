// pisandbox::session — the host Unix sockets of one command (docs/host-ipc.md, "Host sockets"):
// who decides a connection the sandbox's broker (sandbox/linux/unix_broker.hpp) found to lead
// to a host socket.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "approval/broker.hpp"
#include "policy/host_environment.hpp"
#include "policy/host_sockets.hpp"
#include "sandbox/command.hpp"
#include "session/network_setup.hpp"

namespace pisandbox::session {

/// The operation of a host socket's approval request (surface `host-ipc`).
inline constexpr std::string_view kConnectUnixOperation = "connect-unix";

/// The warning shown with a host socket's question: what listens there acts for the command.
inline constexpr std::string_view kHostSocketWarning =
    "Warning: the service behind a host socket acts for this command on the host; tmux, docker "
    "and the like run any command there.";

/// Whether a command's host sockets may be asked for: a built-in subagent's never are (as its
/// host runs, docs/host-ipc.md): refused with `builtin subagents do not support host
/// forwarding` unless listed.
enum class HostSocketAsking { Allowed, Subagent };

/// Decides the host sockets of one command, in this order:
///   0. a socket with more than one name (a hard link: where it really lives is unknown) →
///      refused without asking;
///   1. a `hostIPC.allowedSockets` entry whose expanded path is the socket's path (compared as
///      written: a symlink on the way would let whoever can write there aim it elsewhere), and
///      that lies outside every place the command may write (`writable`: the deepest area
///      holding it decides, so `~/.ssh` is not writable where the workspace is the home, whose
///      top level and dot-entries are bound read-only; docs/security.md, "The workspace is the
///      home") → allowed without asking;
///   2. a socket refused earlier in the command → refused again with the same reason, without
///      a second question or line;
///   3. a name-service socket (nscd, systemd-userdb) → refused without asking: the C library
///      looks for them on every user lookup and falls back to the files by itself; a
///      subagent's (HostSocketAsking::Subagent) → refused without asking;
///   4. the broker with a `host-ipc` / `connect-unix` request (`path`: the socket's host path,
///      `command`, `cwd`, `agentName`), one-shot like every host-IPC request.
/// A refusal (3-4) is one line `host socket refused: <path>: <reason>` through `log` and a call
/// of `denied` (path, reason, source, recovery: NetworkDecider::refuse()), except a name-service
/// socket's, which is silent. Thread-safe.
class HostSockets {
 public:
  /// `broker` must stay valid as long as `keep_alive` (which this holds). `writable`: the
  /// read-write binds and the read-only places over them (session::writable_areas()).
  HostSockets(std::vector<policy::AllowedSocket> allowed,
              std::vector<policy::WritableArea> writable, approval::Broker& broker,
              std::shared_ptr<void> keep_alive, NetworkCommand command, HostSocketAsking asking,
              std::function<void(const std::string&)> log,
              std::function<void(const std::string&, const std::string&, std::string_view,
                                 std::string_view)>
                  denied);

  /// The answer for the host socket `socket` (its path absolute, symlinks resolved).
  [[nodiscard]] sandbox::HostSocketAnswer decide(const sandbox::HostSocketRequest& socket);

  /// Whether a hostIPC.allowedSockets entry allows the host socket `socket` (absolute, symlinks
  /// resolved) without asking: step 1 above.
  [[nodiscard]] bool allows(const std::filesystem::path& socket) const;

  /// Whether a hostIPC.allowedSockets entry names the host socket `socket` (absolute, symlinks
  /// resolved), whether or not it allows it (allows() also asks that the command cannot write
  /// there).
  [[nodiscard]] bool listed(const std::filesystem::path& socket) const;

  /// Whether `entry` (an expanded allowedSockets path) lies in a place the command may write
  /// (policy::in_writable_area(), lexically), where it allows nothing.
  [[nodiscard]] bool writable_by_command(const std::filesystem::path& entry) const;

  /// Whether a host socket was refused in this command: a trigger of the host-IPC retry
  /// (hostIPC.retryOnUnixSocketError; docs/host-ipc.md) whatever the command printed.
  [[nodiscard]] bool refused_any() const { return refused_any_.load(); }

  /// The host socket `socket` (absolute, symlinks resolved) is a gpg-agent's standard socket
  /// whatever its name: the session's gpg home's (policy::SigningFiles::gpg_agent, whose real
  /// path a link may name otherwise). A connection allowed to it is made to the extra socket
  /// beside it, as for every socket named `S.gpg-agent` (restricted_socket()). Call before the
  /// command starts.
  void add_gpg_agent(std::string socket);

  /// Whether the host socket at `path` (absolute, symlinks resolved, as decide() was given it)
  /// was refused in this command.
  [[nodiscard]] bool refused(const std::string& path);

 private:
  sandbox::HostSocketAnswer refuse(const std::string& path, std::string reason,
                                   std::string_view source, bool quiet,
                                   std::string_view recovery = {});
  /// The restricted socket a connection allowed to `path` is made to, empty for `path` itself:
  /// gpg-agent's extra socket beside a gpg-agent socket, which signs but refuses to export
  /// secret keys (policy::gpg_restricted_socket(); gpg-agent(1), --extra-socket;
  /// docs/security.md, "Signed commits").
  std::string restricted_socket(const std::string& path) const;
  /// The answer for an allowed connection to `path`: to restricted_socket() when there is one,
  /// refused while that is missing.
  sandbox::HostSocketAnswer allow(const std::string& path);

  std::vector<policy::AllowedSocket> allowed_;
  std::vector<policy::WritableArea> writable_;
  approval::Broker& broker_;
  std::shared_ptr<void> keep_alive_;
  NetworkCommand command_;
  HostSocketAsking asking_;
  std::function<void(const std::string&)> log_;
  std::function<void(const std::string&, const std::string&, std::string_view, std::string_view)>
      denied_;
  std::mutex mutex_;
  std::map<std::string, std::string> refused_;  ///< path -> reason, for the rest of the command
  std::set<std::string> gpg_agents_;            ///< add_gpg_agent()
  std::atomic<bool> refused_any_{false};
};

/// A HostSocketDecider for RunOptions::host_socket that asks `sockets` (kept alive by it).
[[nodiscard]] sandbox::HostSocketDecider host_socket_decider(std::shared_ptr<HostSockets> sockets);

}  // namespace pisandbox::session
