// pisandbox::sandbox — what a runner runs and what comes back (platform-neutral).
#pragma once

#include <chrono>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/unique_fd.hpp"

namespace pisandbox::sandbox {

/// One command to run.
///   argv: program and arguments; argv[0] is looked up in the command's PATH. The `-c` form
///         is {"/bin/bash", "-c", <string>} (compatibility C14).
///   cwd:  absolute working directory (the workspace).
///   env:  the command's whole environment, as "NAME=value" strings.
struct Command {
  std::vector<std::string> argv;
  std::filesystem::path cwd;
  std::vector<std::string> env;
};

/// The two output streams of a command.
enum class Stream { Stdout, Stderr };

/// Receives a command's output as it comes (docs/ARCHITECTURE.md, step 8). Called on
/// the runner's thread, in order within each stream, with every byte exactly once; `bytes`
/// is only valid during the call (never empty).
class OutputSink {
 public:
  virtual ~OutputSink() = default;
  virtual void write(Stream stream, std::string_view bytes) = 0;
};

/// The listening sockets for the proxy: on Linux those the sandbox made on its own loopback
/// (docs/network.md "Bridge into the sandbox"): HTTP proxy (port 3128) and SOCKS5 (port 1080),
/// each on 127.0.0.1 and, when the kernel has IPv6, [::1]; on macOS two on the host's
/// 127.0.0.1 at ports the kernel chose (docs/macos.md).
///   username, password: the per-command credential every client must present (both empty:
///   none, as on Linux, where only the command can reach its listeners; on macOS any local
///   process could, so the runner always sets one: proxy::ServerOptions::credential).
struct ProxyListeners {
  std::vector<core::UniqueFd> http;
  std::vector<core::UniqueFd> socks;
  std::string username;
  std::string password;
};

/// Starts the proxy on `listeners`, on the supervisor's side, once the sandbox has made them
/// (before the command starts). The returned handle stops the proxy and closes every
/// connection when destroyed, which the runner does when the command has ended. May start
/// threads: it is called after the sandbox's pid 1 has been cloned.
using ProxyStarter = std::function<std::shared_ptr<void>(ProxyListeners listeners)>;

/// A resource limit that a command reached (docs/security.md, "Resource limits").
///   Processes: a fork or clone failed at the sandbox's process limit (the command saw EAGAIN);
///   Memory: the sandbox ran out of memory and was killed whole;
///   Tmpfs: the tmpfs budget (/tmp, /var/tmp, /dev/shm and the hidden home) was full when the
///     command ended (its writes there failed with ENOSPC).
enum class Limit { Processes, Memory, Tmpfs };

/// The answer about one host Unix socket: allowed, or refused for `reason`.
struct HostSocketAnswer {
  bool allow = false;
  std::string reason;
  /// When allowed and not empty: the host socket (absolute) connected in place of the one asked
  /// for, a restricted socket of the same service (gpg-agent's extra socket: docs/security.md,
  /// "Signed commits").
  std::string connect_to = {};
};

/// One host Unix socket a sandboxed command connects to.
///   path: absolute, the path of the socket's inode with symlinks resolved;
///   hard_link: the inode has more than one name, so `path` may not be where it really lives.
struct HostSocketRequest {
  std::string path;
  bool hard_link = false;
};

/// Decides whether a sandboxed command may connect to a host Unix socket. Called from several
/// threads at once; may block while someone answers; reports a refusal itself.
using HostSocketDecider = std::function<HostSocketAnswer(const HostSocketRequest& socket)>;

/// The spelling of a Limit: "pids", "memory" (serve's `exit` event) or "tmpfs".
inline std::string_view to_string(Limit limit) {
  switch (limit) {
    case Limit::Memory:
      return "memory";
    case Limit::Tmpfs:
      return "tmpfs";
    case Limit::Processes:
      break;
  }
  return "pids";
}

/// Where a command's stderr goes when its output is read through pipes (RunOptions::output).
///   Own: a pipe of its own, read as Stream::Stderr (the order between the two streams is
///     lost: the supervisor reads whichever pipe has data);
///   Stdout: the stdout pipe itself (fd 2 a duplicate of fd 1), read as Stream::Stdout, so
///     that what the command wrote arrives in the order it wrote it (serve's `stderr:
///     "stdout"`, docs/protocol.md). pi-sandbox's own lines stay on Stream::Stderr.
enum class StderrRoute { Own, Stdout };

/// How long a command may run, how it can be cancelled, and where its stdio goes.
///   timeout:   wall-clock limit in milliseconds; none means unlimited.
///   cancel_fd: a descriptor that becomes readable to cancel the command (a signalfd for
///              `run`, an eventfd for `serve`), or -1.
///   output:    null: the command writes to the caller's stdout and stderr directly;
///              otherwise both go through pipes to this sink (the runner reads them until
///              the command's processes are gone).
///   stdin_fd:  the command's stdin, or -1 for the caller's own.
///   proxy:     empty: the command has no network at all (only its own loopback); else the
///              sandbox makes the proxy's listeners and this starts the proxy on them.
///   limit_reached: told after the command of each resource limit it reached.
///   direct_connection: told once after the command when it tried to reach the network without
///              the proxy (docs/network.md, "Clients that ignore the proxy").
struct RunOptions {
  std::optional<std::chrono::milliseconds> timeout;
  int cancel_fd = -1;
  OutputSink* output = nullptr;
  /// With `output`: whether the command's stderr has a pipe of its own (see StderrRoute).
  StderrRoute stderr_route = StderrRoute::Own;
  int stdin_fd = -1;
  ProxyStarter proxy;
  /// Told after the command, once for each limit it reached (may be empty).
  std::function<void(Limit)> limit_reached;
  /// Told once after the command when the kernel counted a packet with no route or a datagram
  /// to a closed loopback port in the sandbox's network namespace (may be empty).
  std::function<void()> direct_connection;
  /// Told after the command, one whole line at a time: what the guard moved to the quarantine
  /// or undid (docs/security.md, "The guard"). May be empty: the lines are then not shown (the
  /// quarantine keeps its records).
  std::function<void(const std::string&)> notice;
  /// The command's words (its argv, or its shell text's pieces, policy::path_pieces()): after
  /// a failed git operation they name in a package of a monorepo that wrote nothing, `notice`
  /// is told which paths outside the workspace it needed (docs/security.md, "Repositories
  /// around the workspace"). Empty: nothing is told.
  std::vector<std::string> words;
  /// Decides each connection of the command to a host Unix socket (docs/host-ipc.md, "Host
  /// sockets"): `path` is the socket's absolute host path, symlinks resolved; called from
  /// several threads at once, may block while someone answers. Empty: every one is refused.
  HostSocketDecider host_socket;
  /// Asked, when the command gets no cgroup (docs/security.md, "Resource limits"), whether to
  /// say so now: `run` says it once a day, `serve` once per session, `doctor`'s trial run
  /// never (it has a line of its own). Empty: said for every command.
  std::function<bool()> say_no_cgroup;
  /// Whether to say now that the workspace contains the home (policy::home_workspace_warning()):
  /// `serve` says it for its first command only, as the no-cgroup warning. Empty: said for
  /// every command (`run`, where `--cwd` names the home each time).
  std::function<bool()> say_home_workspace;
  /// Where the end of the sandbox goes once the command's result is complete (Linux: every
  /// process of the command gone, pid 1's last guard sweep told, the output read to its end,
  /// no host placeholder to remove), so that the caller can report the result first: what is
  /// handed over holds pid 1 in its exit, the proxy, the Unix-socket broker and the cgroup,
  /// and destroying it waits for pid 1 and removes the cgroup (docs/ARCHITECTURE.md, "A sandbox
  /// made ahead"). Empty: the runner waits for all of it before it returns.
  std::function<void(std::shared_ptr<void>)> teardown;
  /// A check still being made when the command is handed over (serve's record of the host
  /// for a sandbox made ahead, docs/security.md "A sandbox made ahead"): called once the command
  /// is with the sandbox's pid 1 and may block; its process waits before its execve(2) until
  /// this returns. true lets the command run; false kills the sandbox with nothing of the
  /// command run, and the runner returns RunFailureKind::Stale. May be called more than once
  /// (the same answer each time). Empty: no gate.
  std::function<bool()> gate;
};

/// The command exited with `code` (0-255).
struct Exited {
  int code;
  friend bool operator==(const Exited&, const Exited&) = default;
};
/// The command died of signal `signal`.
struct Signaled {
  int signal;
  friend bool operator==(const Signaled&, const Signaled&) = default;
};

/// Why a command has no exit status of its own.
enum class RunFailureKind {
  TimedOut,      ///< the timeout passed; the whole sandbox was killed
  Aborted,       ///< cancel_fd became readable; the whole sandbox was killed
  LaunchFailed,  ///< the sandbox could not be set up; nothing ran
  GuardFailed,   ///< the guard could not make a check (Guard::failure()); the whole sandbox
                 ///< was killed, then swept
  Stale,         ///< RunOptions::gate said no: the sandbox was killed, nothing of the command
                 ///< ran; its caller runs it again without the sandbox made ahead
};

/// A failure with its user-facing message (for LaunchFailed: the failing step, syscall,
/// path and errno, then an optional hint line).
struct RunFailure {
  RunFailureKind kind;
  std::string message;
  friend bool operator==(const RunFailure&, const RunFailure&) = default;
};

/// The result of running a command.
using Outcome = std::expected<std::variant<Exited, Signaled>, RunFailure>;

}  // namespace pisandbox::sandbox
