// pisandbox::sandbox::linux_ — the weaker sandbox where namespaces cannot be made
// (docs/security.md, "Where namespaces cannot be made"): a container whose seccomp profile refuses
// unshare(CLONE_NEWUSER), a kernel with user.max_user_namespaces=0, a /proc the container masks.
//
// The command runs in the host's namespaces, confined by Landlock alone for the filesystem
// (Documentation/userspace-api/landlock.rst): reads only where the policy allows them (the system,
// the workspace, what it re-exposes of the home; the home, the host's /tmp, /var/tmp, /dev/shm and
// /run/user never), writes only to the writable roots and a private temporary directory. seccomp
// as in the full sandbox, with every connect() and bind() brokered (unix_broker.hpp, HostNetwork):
// an inet connect() reaches only the proxy's listeners on the host's 127.0.0.1, which ask for the
// command's credential, and Landlock's TCP rule (ABI 4) allows only their ports as a second wall.
// A reaper process (a child subreaper, prctl(2) PR_SET_CHILD_SUBREAPER) stands where pid 1 would:
// every process the command starts ends with it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "policy/sandbox_policy.hpp"
#include "sandbox/command.hpp"
#include "sandbox/linux/kernel_probe.hpp"
#include "sandbox/linux/landlock.hpp"
#include "sandbox/linux/launch_spec.hpp"
#include "sandbox/linux/seccomp.hpp"

namespace pisandbox::sandbox::linux_ {

/// Why this machine cannot make the full sandbox's namespaces, or empty when it can. Probed in a
/// child: unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID), then in its child (pid 1 of the new
/// pid namespace) a private `/` and mount("proc", "/proc"), which a container that masks /proc
/// paths refuses with EPERM (mount_namespaces(7), "mnt_too_revealing"). The text names the call
/// and errno: `unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID): EPERM`.
[[nodiscard]] std::string namespaces_refused();

/// The names in a directory of the host (without "." and ".."), empty when it cannot be read.
using ListDirectory = std::function<std::vector<std::string>(const std::filesystem::path&)>;

/// The host's listing, for plan_landlock_only(): symbolic links left out.
std::vector<std::string> list_host_directory(const std::filesystem::path& dir);

/// The host paths no command of this mode reads: the home (when the policy hides it), /tmp,
/// /var/tmp, /dev/shm and /run/user (the host's temporary files, shared memory and the users'
/// runtime directories, which the full sandbox replaces with private ones).
std::vector<std::filesystem::path> landlock_only_hidden(const policy::SandboxPolicy& policy);

/// The command's own places on the host, made for each command and removed after it.
///   temp_dir: its TMPDIR, TMP and TEMP; home_layer: its HOME where the policy hides the home
///   (links to what the policy re-exposes), else empty.
struct PrivatePlaces {
  std::filesystem::path temp_dir;
  std::filesystem::path home_layer;
};

/// The Landlock plan of this mode (pure but for `list`):
///   - read-execute beneath every path outside landlock_only_hidden(): `/` is split into the
///     entries beside each hidden path (listed by `list`), down to it, so that a hidden path is
///     covered by no rule;
///   - read-execute beneath each re-exposed path of the home (policy.home_read_allowed; a
///     copy-on-write one is read-only here), split likewise around policy.concealed;
///   - read-write beneath each writable root and the private places;
///   - read-write on the character devices a program writes (/dev/null, /dev/zero, /dev/full,
///     /dev/random, /dev/urandom, /dev/tty, /dev/ptmx) and beneath /dev/pts;
///   - TCP connect() only to `proxy_ports` (host byte order), from ABI 4.
/// Rules are listed parents first; those whose path does not exist are skipped when applied.
LandlockPlan plan_landlock_only(const policy::SandboxPolicy& policy, const PrivatePlaces& places,
                                std::span<const std::uint16_t> proxy_ports,
                                const ListDirectory& list);

/// The seccomp table of this mode: seccomp_rules(UnixSockets::Brokered), whose connect() and
/// bind() rows bring every address to the supervisor, and rows for the host's network, which no
/// namespace hides: no inet datagram or raw socket (a datagram names its destination in
/// sendto(), which no filter can read), no AF_PACKET socket, no TCP Fast Open (sendto(2),
/// sendmsg(2), sendmmsg(2) with MSG_FASTOPEN connect without connect()).
std::vector<SeccompRule> landlock_only_seccomp_rules();

/// What this mode cannot give, each with what it means: said by `doctor` and `policy`.
inline constexpr std::string_view kLandlockOnlyLimits =
    "no private /tmp (the command gets a private TMPDIR; the host's /tmp, /var/tmp and /dev/shm "
    "are closed to it); no /proc or process IDs of its own (it sees the host's processes and "
    "their command lines; Landlock keeps it from tracing them or reading their memory and "
    "environment); no IPC isolation (the user's System V shared memory, semaphores and message "
    "queues, and below Landlock ABI 6 signals to the user's processes); no placeholders "
    "(protected paths in writable roots stay writable while it runs and are put back after "
    "it); no cgroup limits; Landlock does not cover chmod, chown or timestamps, so a command "
    "run as root can change those of any file it can name";

/// The `doctor` line of this mode: ok ("not needed") where the namespaces can be made; not ok
/// but not required ("weaker") where this mode runs meanwhile, with why and what it cannot
/// give; required (MISSING) where it cannot run either (no Landlock, no socket broker).
KernelCheck landlock_only_check();

/// The processes of pi-sandbox a command of this mode must not signal: it shares their pid
/// namespace and, unless it leaves it, their process group.
///   supervisor: pi-sandbox; reaper: the command's parent; group: their process group.
struct OwnProcesses {
  pid_t supervisor;
  pid_t reaper;
  pid_t group;
};

/// Rows refusing (EPERM) the signals that would reach `own`: kill(2) and rt_sigqueueinfo(2) of
/// the supervisor, the reaper, their process group (by number or 0) and every process (-1);
/// tgkill(2) and rt_tgsigqueueinfo(2) of the supervisor's or the reaper's threads; tkill(2)
/// (it names a thread of any process; libc uses tgkill); pidfd_open(2) of either. Killing the
/// reaper would leave the command's processes running unreaped, killing the supervisor would
/// leave the protected paths not put back. Below Landlock ABI 6 (which scopes signals to the
/// command's domain) pidfd_send_signal(2) is refused too: a pidfd of /proc/<pid> names any.
std::vector<SeccompRule> own_process_rows(const OwnProcesses& own, int landlock_abi);

/// The line said once for every command of this mode, before it runs (what it cannot give);
/// the runner's warning sink puts `pi-sandbox: ` before it.
inline constexpr std::string_view kLandlockOnlyNotice =
    "weaker sandbox, user namespaces cannot be made here: Landlock, seccomp and the proxy "
    "confine this command, without a private /tmp (a private TMPDIR instead), /proc, process "
    "IDs, IPC, placeholders (protected paths are put back after it) or cgroup limits "
    "(`pi-sandbox doctor` says why; docs/security.md, \"Where namespaces cannot be made\")";

/// Runs `spec` (as prepare_sandbox() made it for `policy`) in this mode and waits for it: the
/// same meaning and Outcome as launch(). Refused (LaunchFailed) when the workspace is or
/// contains the home, when Landlock is unavailable (`landlock_abi` 0) and when the kernel cannot
/// broker sockets (unix_broker_unsupported()): never unsandboxed.
Outcome run_landlock_only(const policy::SandboxPolicy& policy, LaunchSpec spec,
                          const RunOptions& options);

}  // namespace pisandbox::sandbox::linux_
