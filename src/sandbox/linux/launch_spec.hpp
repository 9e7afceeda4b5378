// pisandbox::sandbox::linux_ — everything pid 1 of a sandbox needs, computed before clone.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/unique_fd.hpp"
#include "policy/limits.hpp"
#include "policy/proxy_environment.hpp"
#include "sandbox/command.hpp"
#include "sandbox/linux/cgroup.hpp"
#include "sandbox/linux/guard.hpp"
#include "sandbox/linux/landlock.hpp"
#include "sandbox/linux/mount_plan.hpp"
#include "sandbox/linux/seccomp.hpp"
#include "sandbox/linux/terminal.hpp"

namespace pisandbox::sandbox::linux_ {

/// The plans of one sandbox plus the command.
///   command: what launch() runs; prepare_launch() ignores it (the command comes with
///   run_command(), sent to pid 1 then: LaunchMessage::Command).
///   landlock_abi: the ABI to use, 0 to run without Landlock (the namespaces still hold).
struct LaunchSpec {
  Command command;
  /// The command's stdin, stdout and stderr (-1: the process's own) for exec_direct(); launch()
  /// sends them with the command order instead.
  std::array<int, 3> direct_stdio{-1, -1, -1};
  MountPlan mounts;
  LandlockPlan landlock;
  std::vector<SeccompRule> seccomp;
  int landlock_abi = 0;
  bool proxy_listeners = false;  ///< pid 1 creates the proxy's listeners (set by launch())
  /// pid 1 forks and confines the command's process before the command comes (a sandbox made
  /// ahead: docs/ARCHITECTURE.md, "A sandbox made ahead"); it then only waits for its order.
  bool confine_ahead = false;
  /// The sandbox's resource limits; all zero: none (a spec built by hand in a test).
  policy::ResourceLimits limits{0, 0, 0, 0};
  /// Where the sandbox's cgroup is made (kind None: no cgroup; limits.max_processes then
  /// becomes the command's RLIMIT_NPROC where that binds, i.e. not for uid 0).
  CgroupSupport cgroups;
  /// RLIMIT_NPROC for the command, 0 for none (set by launch() when no cgroup holds it).
  std::uint64_t rlimit_nproc = 0;
  /// cgroup v1: the `tasks` files of the sandbox's cgroups (SandboxCgroup::tasks_fds(), set by
  /// prepare_launch()), which pid 1 writes itself into first after Go and then closes
  /// (join_own_cgroups()); empty with v2 (pid 1 is cloned into its cgroup) or no cgroup.
  std::vector<int> cgroup_tasks_fds = {};
  /// What the guard watches (guard.hpp): the supervisor watches it while the command runs and
  /// sweeps it afterwards; pid 1 sweeps it when the supervisor has died.
  GuardPlan guard;
  /// The quarantine's descriptor (set by launch(); pid 1 inherits it, the command never does:
  /// O_CLOEXEC): its root, or while that does not exist its deepest existing ancestor.
  int quarantine_fd = -1;
  /// The quarantine's components still to make below quarantine_fd (empty: it is the root).
  std::vector<std::string> quarantine_missing = {};
};

/// The proxy's ports on the sandbox's own loopback (docs/network.md, "The bridge").
inline constexpr int kHttpProxyPort = policy::kLinuxHttpProxyPort;
inline constexpr int kSocksProxyPort = policy::kLinuxSocksProxyPort;

/// How little free space (bytes) of the tmpfs budget counts as full at the end of a command:
/// one 2 MiB huge page, the most that tmpfs allocates at once, so a write that failed with
/// ENOSPC always leaves less (mm/shmem.c charges a write's pages before it succeeds).
inline constexpr std::uint64_t kTmpfsFullMargin = 2ULL << 20;

/// Messages from pid 1 to the supervisor over the launch socket (SOCK_SEQPACKET, one
/// message per record). The first byte is the type; the rest is text.
enum class LaunchMessage : char {
  Go = 'G',           ///< supervisor -> pid 1: the id maps are written, go on
  GuardStart = 'W',   ///< supervisor -> pid 1, no text: the command has come, start the guard
                      ///< (the supervisor starts its own alongside); always before Command
  Command = 'R',      ///< supervisor -> pid 1: fork the command. Text: four flags `0`/`1`,
                      ///< whether a descriptor replaces the command's stdin, stdout, stderr,
                      ///< and whether a gate holds the command before its execve(2);
                      ///< SCM_RIGHTS: a memfd, then those descriptors, then the gate (one end
                      ///< of a stream socket pair: one byte opens it, its end without one
                      ///< means the command never runs: RunOptions::gate). The memfd holds the
                      ///< cwd, the argv count, the argv, the environment count, the
                      ///< environment (each NUL-terminated), then `1` and a PtySetup's bytes
                      ///< for a private pty, else `0` (a memfd: an argv or environment can
                      ///< exceed what one SOCK_SEQPACKET record holds)
  Error = 'E',        ///< setup failed: "<step>: <syscall>: <errno>" [\n hint]
  Placeholder = 'P',  ///< "<inode>[s] <path>": a host placeholder (with `s`: a scaffold) to remove
  Result = 'X',       ///< "exit <code>" or "signal <number>"
  Listeners = 'L',    ///< "<kind>..." with one SCM_RIGHTS descriptor per kind letter:
                      ///< `h` an HTTP proxy listener, `s` a SOCKS5 listener
  Terminal = 'T',     ///< no text, one SCM_RIGHTS descriptor: the private pty's master
  Notice = 'N',       ///< one line of the guard's last sweep for the user (guard.hpp)
  Swept = 'S',        ///< no text: pid 1 ran the guard's last sweep after every process was gone
  TmpfsFull = 'F',    ///< "<budget bytes>": the tmpfs budget had less than kTmpfsFullMargin
                      ///< bytes free once every process was gone (limits.tmpfs)
  Phases = 'M',       ///< PI_SANDBOX_TRACE_PHASES: marks of pid 1 or of the command's process
                      ///< (core::phases::take_unsent(), binary)
  UnixBroker = 'U',   ///< the command's process, before exec: "<dev> ..." (the private
                      ///< tmpfs devices) with two SCM_RIGHTS descriptors, the helper's channel
                      ///< and the seccomp listener (unix_broker.hpp)
};

/// One record pid 1 (or the weaker sandbox's reaper) sent over the launch socket: its type,
/// its text and the descriptors it carried (SCM_RIGHTS, close-on-exec).
struct LaunchRecord {
  LaunchMessage kind = LaunchMessage::Error;
  std::string text;
  std::vector<core::UniqueFd> fds;
};

/// What receive_record() found: a record, nothing pending now (EAGAIN, EINTR), or the end of
/// the stream (the sender is gone, or recvmsg(2) failed otherwise).
enum class Received { Record, Nothing, Ended };

/// Reads one pending record of the launch socket `fd` without waiting (launcher.cpp).
Received receive_record(int fd, LaunchRecord& record);

/// The exit of a Result record's text (`exit <code>`, `signal <number>`); nullopt for other text.
std::optional<std::variant<Exited, Signaled>> parse_result(const std::string& text);

/// Confines the calling process for `spec` (init.cpp: no_new_privs, Landlock, capabilities
/// dropped, seccomp last; with Notify rows the Unix-socket broker's helper is started and the
/// listener sent over `launch_fd` as LaunchMessage::UnixBroker). Used by pid 1's command and by
/// the runner where namespaces cannot be made (landlock_only.hpp). Errors name the call.
core::Result<void> confine(const LaunchSpec& spec, int launch_fd);

/// In the process that becomes the command where no supervisor sends a command order (the
/// weaker sandbox, landlock_only.cpp): chdir to `spec.command`'s directory, confine(), the
/// descriptors of `spec.direct_stdio`, then exec (exit 127 when not found, 126 when it cannot
/// run; a failed step is sent over `launch_fd` as LaunchMessage::Error, exit 125).
[[noreturn]] void exec_direct(const LaunchSpec& spec, int launch_fd);

/// Runs as pid 1 of the new namespaces (never returns): waits for Go, joins its v1 cgroups
/// (spec.cgroup_tasks_fds), applies the mount plan, waits for the Command, makes the command's
/// private pty if asked, forks the command (which confines itself: no_new_privs, Landlock,
/// capabilities, seccomp, exec), reaps, reports the result, kills what is left, runs the guard's
/// last sweep (reporting it), removes placeholders. Without a Command (the supervisor discarded the
/// sandbox or died) it removes what it made and exits 125.
[[noreturn]] void sandbox_init_main(const LaunchSpec& spec, int launch_fd);

}  // namespace pisandbox::sandbox::linux_
