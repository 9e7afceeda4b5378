#include "sandbox/linux/launcher.hpp"

#include <fcntl.h>
#include <linux/sched.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <span>

#include "core/deadline.hpp"
#include "core/io.hpp"
#include "core/phase_trace.hpp"
#include "core/scm_rights.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/linux/guard.hpp"
#include "sandbox/linux/host_diagnosis.hpp"
#include "sandbox/linux/launch_report.hpp"
#include "sandbox/linux/net_counters.hpp"
#include "sandbox/linux/placeholders.hpp"
#include "sandbox/linux/program_pages.hpp"
#include "sandbox/linux/terminal.hpp"
#include "sandbox/linux/unix_broker.hpp"
#include "sandbox/output_pipes.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using core::UniqueFd;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kNamespaces =
    CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;

std::string userns_hint(int err) {
  if (err != EPERM && err != ENOSPC && err != EINVAL && err != EACCES) return {};
  return "hint: unprivileged user namespaces look disabled or restricted; run `pi-sandbox "
         "doctor` (sysctls kernel.unprivileged_userns_clone, user.max_user_namespaces, "
         "kernel.apparmor_restrict_unprivileged_userns)";
}

bool write_file(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  return fd && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

core::Result<void> write_id_maps(pid_t pid) {
  const std::string base = "/proc/" + std::to_string(pid);
  const std::string uid = std::to_string(::geteuid()), gid = std::to_string(::getegid());
  // The caller's uid and gid map to themselves (docs/security.md, "Layers, in the order they are
  // applied"); setgroups must be denied before an unprivileged gid_map write (user_namespaces(7)).
  if (!write_file(base + "/uid_map", uid + " " + uid + " 1\n"))
    return core::fail_errno("write(" + base + "/uid_map)", userns_hint(errno));
  if (!write_file(base + "/setgroups", "deny\n") && errno != ENOENT)
    return core::fail_errno("write(" + base + "/setgroups)");
  if (!write_file(base + "/gid_map", gid + " " + gid + " 1\n"))
    return core::fail_errno("write(" + base + "/gid_map)", userns_hint(errno));
  return {};
}

struct Child {
  pid_t pid = -1;
  UniqueFd pidfd;
};

/// Clones pid 1 of the sandbox; with `cgroup_fd` >= 0 straight into that cgroup v2
/// directory (CLONE_INTO_CGROUP), so no instruction of it runs outside its limits.
core::Result<Child> clone_sandbox(const LaunchSpec& spec, int parent_end, int child_end,
                                  int cgroup_fd) {
  int pidfd = -1;
  clone_args args{};
  args.flags = kNamespaces | CLONE_PIDFD;
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<std::uint64_t>(cgroup_fd);
  }
  args.pidfd = reinterpret_cast<std::uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  const long pid = ::syscall(SYS_clone3, &args, sizeof args);
  if (pid < 0) {
    const int err = errno;
    return std::unexpected(core::sys_error(
        "clone3(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET|CLONE_NEWIPC|CLONE_NEWUTS)",
        err, clone_hint(err)));
  }
  if (pid == 0) {
    ::close(parent_end);
    sandbox_init_main(spec, child_end);
  }
  core::phases::mark(core::phases::Mark::Cloned);
  return Child{static_cast<pid_t>(pid), UniqueFd(pidfd)};
}

int wait_child(const Child& child) {
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// How long pid 1 gets to kill its tree and remove its placeholders after SIGTERM.
constexpr int kStopGraceMs = 5000;

/// Asks pid 1 to stop: SIGTERM makes it kill every process of the sandbox and remove its
/// placeholders itself (it may still be setting up, and only it knows what it has created so
/// far). SIGKILL after kStopGraceMs, in which case the kernel kills the pid namespace.
void stop_sandbox(const Child& child) {
  ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGTERM, nullptr, 0);
  pollfd pfd{child.pidfd.get(), POLLIN, 0};
  if (::poll(&pfd, 1, kStopGraceMs) <= 0)
    ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0);
}

enum class Ending { Exited, TimedOut, Aborted, GuardFailed };

/// Whether the sandbox's cgroup says its memory ran out; then the whole sandbox is killed at
/// once (cgroup v1 kills one process; v2's memory.oom.group has killed them all already).
bool out_of_memory(const Child& child, const SandboxCgroup* cgroup, short revents) {
  if (cgroup == nullptr || revents == 0) return false;
  if (!cgroup->out_of_memory()) return false;
  ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0);
  cgroup->kill_all();
  return true;
}

/// The private pty's relay (inactive without one) and its plan.
struct Terminal {
  TerminalPlan plan;
  TerminalRelay relay;
};

/// Starts relaying the private pty once pid 1 has sent its master; a relay that cannot
/// start is a setup failure (the sandbox is stopped).
bool start_relay(const Child& child, LaunchReport& report, Terminal& terminal) {
  if (!report.terminal) return true;
  auto started = terminal.relay.start(terminal.plan, std::move(report.terminal));
  if (started) return true;
  report.error = "private terminal: " + started.error().describe();
  stop_sandbox(child);
  return false;
}

/// What the supervisor runs for the command while it lives: the proxy and the Unix-socket
/// broker, each started once pid 1's side has sent what it needs.
struct Services {
  std::shared_ptr<void> proxy;
  std::unique_ptr<UnixBroker> unix;
};

void start_services(LaunchReport& report, const RunOptions& options, Services& services) {
  if (report.listeners && options.proxy) {
    services.proxy = options.proxy(std::move(*report.listeners));
    report.listeners.reset();
  }
  if (report.unix) {
    services.unix = UnixBroker::start(std::move(*report.unix), options.host_socket);
    report.unix.reset();
  }
}

/// Whether the caller can have the command's result before pid 1 has exited
/// (RunOptions::teardown): pid 1 has reported it and its last sweep (it sweeps once it has
/// killed and reaped every other process), the output pipes are at their end, and there is no
/// host placeholder to remove (that waits for the namespaces to go) nor a terminal to relay.
bool result_complete(const LaunchReport& report, const OutputPipes& pipes, const Terminal& terminal,
                     const RunOptions& options) {
  return options.teardown && report.result && report.swept && !pipes.open() &&
         report.placeholders.empty() && !terminal.relay.active() && !terminal.plan.private_pty;
}

Ending supervise(const Child& child, int launch_fd, const RunOptions& options, LaunchReport& report,
                 OutputPipes& pipes, Services& services, const SandboxCgroup* cgroup,
                 Terminal& terminal, Guard& guard) {
  const auto deadline =
      options.timeout ? std::optional(Clock::now() + *options.timeout) : std::nullopt;
  // The policy, the plans and the configuration were built and freed on the heap before the
  // command started, by code that does not run again; those pages go back while it runs, as the
  // supervisor (and its proxy) stays for the command's life (docs/benchmarks.md, "Memory").
  std::optional<Clock::time_point> trim_at = Clock::now() + kReleaseAfter;
  bool socket_open = true;
  constexpr std::size_t kOwn = 7, kAll = kOwn + TerminalRelay::kPollFds;
  for (;;) {
    const int oom_fd = cgroup != nullptr ? cgroup->oom_fd() : -1;
    pollfd fds[kAll] = {{child.pidfd.get(), POLLIN, 0},
                        {socket_open ? launch_fd : -1, POLLIN, 0},
                        {options.cancel_fd, POLLIN, 0},
                        {pipes.out ? pipes.out.get() : -1, POLLIN, 0},
                        {pipes.err ? pipes.err.get() : -1, POLLIN, 0},
                        {oom_fd, POLLIN | POLLPRI, 0},
                        {guard.fd(), POLLIN, 0}};
    const std::span<pollfd, TerminalRelay::kPollFds> relayed(fds + kOwn, TerminalRelay::kPollFds);
    for (auto& entry : relayed) entry = {-1, 0, 0};
    if (terminal.relay.active()) terminal.relay.fill(relayed);
    int wait_ms = core::poll_timeout(deadline);
    if (wait_ms == 0) {
      stop_sandbox(child);
      return Ending::TimedOut;
    }
    if (trim_at) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*trim_at - Clock::now()).count();
      if (left <= 0) {
        ::malloc_trim(0);
        // Nothing is lost when this fails: the pages just stay mapped until the supervisor ends.
        (void)release_program_pages();
        trim_at.reset();
      } else if (wait_ms < 0 || left < wait_ms) {
        wait_ms = static_cast<int>(left);
      }
    }
    if (::poll(fds, kAll, wait_ms) < 0 && errno != EINTR) continue;
    out_of_memory(child, cgroup, fds[5].revents);
    if (fds[6].revents != 0) guard.on_events();
    // A check the guard could not make (out of descriptors or memory): fail closed.
    if (guard.failure() && !report.result) {
      stop_sandbox(child);
      return Ending::GuardFailed;
    }
    if (terminal.relay.active()) terminal.relay.handle(relayed);
    if (fds[3].revents != 0 || fds[4].revents != 0) pipes.pump(*options.output);
    if (fds[1].revents != 0) socket_open = read_records(launch_fd, report);
    // pid 1 has killed what was left of the command and swept: nothing of it runs any more, so
    // the watches can go (what they saw until now is kept for final_discovery()).
    if (report.swept) guard.stop_watching();
    if (!start_relay(child, report, terminal)) return Ending::Exited;
    start_services(report, options, services);
    if (fds[2].revents != 0) {
      stop_sandbox(child);
      return Ending::Aborted;
    }
    if (fds[0].revents != 0 || result_complete(report, pipes, terminal, options))
      return Ending::Exited;
  }
}

/// The sandbox's cgroup, when its spec asks for limits and the host has cgroups; otherwise
/// the process limit falls back to RLIMIT_NPROC (set in the spec for pid 1's command).
core::Result<std::optional<SandboxCgroup>> limit_resources(LaunchSpec& spec) {
  if (spec.limits.max_processes == 0) return std::nullopt;
  if (spec.cgroups.kind == CgroupSupport::Kind::None) {
    if (::geteuid() != 0) spec.rlimit_nproc = spec.limits.max_processes;
    return std::nullopt;
  }
  auto cgroup = SandboxCgroup::create(spec.cgroups, spec.limits);
  if (!cgroup) return std::unexpected(cgroup.error());
  return std::optional<SandboxCgroup>(std::move(*cgroup));
}

/// Tells the caller which limits the command reached: the cgroup's (`reached`, its counters;
/// none without a cgroup), and the tmpfs budget's (pid 1 looked at it once every process was
/// gone).
void report_limits(const LimitsReached& reached, const LaunchReport& report,
                   const RunOptions& options) {
  if (!options.limit_reached) return;
  if (report.tmpfs_full) options.limit_reached(Limit::Tmpfs);
  if (reached.memory) options.limit_reached(Limit::Memory);
  if (reached.processes) options.limit_reached(Limit::Processes);
}

/// Tells the caller when the command tried to connect without the proxy: a connection or a
/// datagram to an address outside the sandbox (no route). A name lookup is no connection: the
/// name servers are local addresses inside (their queries count as NoPorts), and a client
/// that uses the proxy may look up names of its own (python's http.server, getfqdn()).
void report_direct_connection(const NetCounters& counters, const RunOptions& options) {
  if (!options.direct_connection) return;
  if (const auto attempts = counters.read(); attempts && attempts->no_route != 0)
    options.direct_connection();
}

/// The command's descriptors for pid 1: -1 keeps pid 1's own 0, 1, 2 (the supervisor's at
/// the clone); `gate`, the command's end of the gate (RunOptions::gate), -1 for none.
struct StdioFds {
  int in = -1;
  int out = -1;
  int err = -1;
  int gate = -1;
};

/// `strings` for the Command record: their count, then each NUL-terminated.
void append_strings(std::string& bytes, const std::vector<std::string>& strings) {
  bytes += std::to_string(strings.size());
  bytes += '\0';
  for (const auto& s : strings) {
    bytes += s;
    bytes += '\0';
  }
}

/// Sends `command` to pid 1 (LaunchMessage::Command, launch_spec.hpp) with the descriptors
/// that replace its stdio, the gate's and, for a private pty, its setup.
core::Result<void> send_command(int launch_fd, const Command& command, const StdioFds& stdio,
                                const std::optional<PtySetup>& pty) {
  std::string bytes = command.cwd.string();
  bytes += '\0';
  append_strings(bytes, command.argv);
  append_strings(bytes, command.env);
  bytes += pty ? '1' : '0';
  if (pty) bytes.append(reinterpret_cast<const char*>(&*pty), sizeof *pty);
  UniqueFd memfd(::memfd_create("pi-sandbox-command", MFD_CLOEXEC));
  if (!memfd) return core::fail_errno("memfd_create(pi-sandbox-command)");
  if (!core::write_all(memfd.get(), bytes))
    return core::fail_errno("write() of the command to its memfd");
  std::string record(1, static_cast<char>(LaunchMessage::Command));
  std::vector<int> fds{memfd.get()};
  for (const int fd : {stdio.in, stdio.out, stdio.err, stdio.gate}) {
    record += fd >= 0 ? '1' : '0';
    if (fd >= 0) fds.push_back(fd);
  }
  if (core::send_with_rights(launch_fd, record.data(), record.size(), fds) < 0)
    return core::fail_errno("sendmsg(SCM_RIGHTS) of the command");
  return {};
}

/// Opens the gate (RunOptions::gate) with one byte through `gate_write`, then closes it. A
/// byte that cannot be sent (the command's process ended before the gate, having said why)
/// changes nothing: the run goes on to its end.
void open_gate(UniqueFd& gate_write) {
  const char open = 'o';
  (void)::send(gate_write.get(), &open, 1, MSG_NOSIGNAL);
  gate_write.reset();
}

}  // namespace

/// What a ReadySandbox owns: pid 1, its launch socket, its cgroup, the quarantine and the
/// guard's plan.
struct ReadySandbox::State {
  std::optional<SandboxCgroup> cgroup;
  GuardPlan guard_plan;
  /// Opened at the prepare (pid 1 inherits its descriptor), moved into the guard when the
  /// command comes.
  Quarantine quarantine;
  UniqueFd launch;  ///< the supervisor's end of the launch socket
  Child child;
  /// Opened before pid 1 runs anything, read after it has gone: the files hold the namespace.
  NetCounters counters;
  bool used = false;        ///< run_command() took it: it waits for pid 1 and cleans up itself
  bool guard_told = false;  ///< pid 1 was sent GuardStart (start_guard_ahead())

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (used || child.pid <= 0) return;
    discard();
  }

  /// Stops pid 1, which has run nothing of a command: SIGTERM and the socket shut down make
  /// it leave its wait for the command and remove its placeholders itself; then what it
  /// reported is removed here too (as after a run), and the cgroup and the guard go with
  /// this object.
  void discard() {
    ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGTERM, nullptr, 0);
    ::shutdown(launch.get(), SHUT_WR);
    stop_sandbox(child);
    wait_child(child);
    remove_reported();
  }

  /// Kills pid 1 of a sandbox whose command waits at the gate and is not to run
  /// (RunOptions::gate): SIGKILL, so that nothing runs in it any more, not even pid 1's last
  /// sweep (no command ran whose changes it could sweep); then what it reported is removed as
  /// after a run, and the cgroup goes with this object.
  void kill_held() {
    ::syscall(SYS_pidfd_send_signal, child.pidfd.get(), SIGKILL, nullptr, 0);
    wait_child(child);
    remove_reported();
  }

 private:
  /// Reads what pid 1 reported and had not been read, and removes the placeholders it names.
  void remove_reported() {
    LaunchReport report;
    while (read_records(launch.get(), report)) {
      pollfd pfd{launch.get(), POLLIN, 0};
      if (::poll(&pfd, 1, 0) <= 0) break;
    }
    for (auto& p : report.placeholders) remove_placeholder(p, Unmask::No);
  }
};

ReadySandbox::ReadySandbox(std::unique_ptr<State> state) : state_(std::move(state)) {}
ReadySandbox::ReadySandbox(ReadySandbox&&) noexcept = default;
ReadySandbox& ReadySandbox::operator=(ReadySandbox&&) noexcept = default;
ReadySandbox::~ReadySandbox() = default;

pid_t ReadySandbox::pid() const {
  return state_ ? state_->child.pid : -1;
}

void start_guard_ahead(ReadySandbox& sandbox) {
  ReadySandbox::State* state = sandbox.state_.get();
  if (state == nullptr || state->guard_told) return;
  const char start_guard = static_cast<char>(LaunchMessage::GuardStart);
  state->guard_told = ::send(state->launch.get(), &start_guard, 1, MSG_NOSIGNAL) == 1;
}

std::expected<ReadySandbox, RunFailure> prepare_launch(LaunchSpec spec) {
  auto state = std::make_unique<ReadySandbox::State>();
  auto limits = limit_resources(spec);
  if (!limits)
    return std::unexpected(
        RunFailure{RunFailureKind::LaunchFailed,
                   "resource limits: " + limits.error().describe() +
                       "\nhint: `pi-sandbox doctor` shows what this machine supports for limits"});
  if (*limits) state->cgroup.emplace(std::move(**limits));
  const SandboxCgroup* cgroup = state->cgroup ? &*state->cgroup : nullptr;
  if (cgroup != nullptr) spec.cgroup_tasks_fds = cgroup->tasks_fds();  // v1: pid 1 joins itself
  auto quarantine = open_quarantine(spec.guard.quarantine);
  if (!quarantine)
    return std::unexpected(RunFailure{
        RunFailureKind::LaunchFailed,
        "the guard's quarantine: " + quarantine.error().describe() +
            "\nhint: the guard moves what a command creates at a protected name there; make " +
            spec.guard.quarantine.parent_path().string() + " writable for this user"});
  state->quarantine = std::move(*quarantine);
  state->guard_plan = spec.guard;
  spec.quarantine_fd = quarantine_descriptor(state->quarantine);
  if (!state->quarantine.root) spec.quarantine_missing = state->quarantine.missing;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed,
                                      core::sys_error("socketpair(AF_UNIX)", errno).message});
  UniqueFd parent_end(pair[0]), child_end(pair[1]);
  auto child = clone_sandbox(spec, parent_end.get(), child_end.get(),
                             cgroup != nullptr ? cgroup->clone_fd() : -1);
  if (!child)
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, child.error().describe()});
  child_end.reset();
  state->counters = NetCounters::open(child->pid);
  // pid 1 waits for Go: it has run nothing yet.
  if (auto mapped = write_id_maps(child->pid); !mapped) {
    ::kill(child->pid, SIGKILL);
    wait_child(*child);
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, mapped.error().describe()});
  }
  core::phases::mark(core::phases::Mark::IdMapsWritten);
  const char go = static_cast<char>(LaunchMessage::Go);
  (void)::send(parent_end.get(), &go, 1, MSG_NOSIGNAL);
  state->child = std::move(*child);
  state->launch = std::move(parent_end);
  return ReadySandbox(std::move(state));
}

namespace {

/// What is left of a sandbox whose command's result is complete (RunOptions::teardown): pid 1
/// in its exit, the proxy, the broker and the guard's inotify instance; destroyed, it waits
/// for pid 1, stops them, and the sandbox's cgroup is removed with it.
struct Teardown {
  ReadySandbox sandbox;
  Services services;
  /// Its inotify instance: the last close waits for the SRCU grace periods of the watches
  /// removed when pid 1 swept (Guard::stop_watching()).
  Guard guard;
  Teardown(ReadySandbox s, Services v, Guard g)
      : sandbox(std::move(s)), services(std::move(v)), guard(std::move(g)) {}
  Teardown(const Teardown&) = delete;
  Teardown& operator=(const Teardown&) = delete;
  ~Teardown();
};

}  // namespace

namespace {

/// The failure of a sandbox whose pid 1 could not be handed the command (it ran nothing of it):
/// pid 1's own error when it said one before it stopped (its mount plan, its guard's start),
/// else `fallback`. The placeholders it reported are removed here: nothing else will find them
/// once the sandbox is discarded.
RunFailure not_handed_over(int launch_fd, const std::string& fallback) {
  LaunchReport early;
  (void)read_records(launch_fd, early);
  for (auto& p : early.placeholders) remove_placeholder(p, Unmask::No);
  return RunFailure{RunFailureKind::LaunchFailed, early.error.empty() ? fallback : early.error};
}

}  // namespace

namespace {

/// The command's stdio for send_command(): RunOptions::stdin_fd, the write ends of new output
/// `pipes` when RunOptions::output is set, and with RunOptions::gate the gate, a socket pair
/// whose `gate_read` end goes with the command, which execs only after a byte came through
/// `gate_write`. Errors: the pipes' or the socket pair's failure.
core::Result<StdioFds> command_stdio(const RunOptions& options, OutputPipes& pipes,
                                     UniqueFd& gate_read, UniqueFd& gate_write) {
  StdioFds stdio;
  if (options.output != nullptr) {
    auto made = OutputPipes::create(options.stderr_route);
    if (!made) return std::unexpected(made.error());
    pipes = std::move(*made);
    stdio.out = pipes.write_out.get();
    stdio.err = pipes.write_err.get();
  }
  stdio.in = options.stdin_fd;
  if (options.gate) {
    int gate[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) != 0)
      return core::fail_errno("socketpair(AF_UNIX) of the gate");
    gate_read.reset(gate[0]);
    gate_write.reset(gate[1]);
    stdio.gate = gate_read.get();
  }
  return stdio;
}

/// Hands `command` over to pid 1 of `state`'s sandbox (run_command()): tells pid 1 to start its
/// guard unless told already, starts the supervisor's, sends the command with its stdio (the
/// output through `pipes` when RunOptions::output is set) and, from a terminal, the setup of a
/// private pty for `terminal`'s plan; with RunOptions::gate, the command's process waits before
/// its execve(2) until the gate answers, the supervisor's guard starts after the hand-over and
/// makes its first check once the gate said yes, then the gate opens. Returns the supervisor's
/// guard, started. Errors: LaunchFailed, with pid 1's own error when it said one; until the
/// command is handed over pid 1 has run nothing of it and `state.used` is false again (the
/// sandbox is discarded as unused); a command held at the gate is killed with its sandbox
/// (ReadySandbox::State::kill_held()), and a gate that says no is Stale.
std::expected<Guard, RunFailure> hand_over(ReadySandbox::State& state, const Command& command,
                                           const RunOptions& options, OutputPipes& pipes,
                                           const Terminal& terminal) {
  const int launch_fd = state.launch.get();
  // The guard starts with the command, not with the sandbox: what it takes as the start (the
  // configurations' content, the directories' entries) is the host as the command finds it,
  // and it watches before anything of the command runs (docs/security.md, "The guard"). pid 1
  // starts its own alongside, told first; nothing of the command runs before the Command below.
  const char start_guard = static_cast<char>(LaunchMessage::GuardStart);
  if (!state.guard_told && ::send(launch_fd, &start_guard, 1, MSG_NOSIGNAL) != 1) {
    const int err = errno;
    state.used = false;  // pid 1 ran nothing: the sandbox is discarded as unused
    return std::unexpected(
        not_handed_over(launch_fd, core::sys_error("send(GuardStart)", err).message));
  }
  // Held at a gate (RunOptions::gate), the command's process runs nothing of the command until
  // the gate opens: the guard starts after the hand-over, alongside pid 1's part of it, and its
  // first check, which moves what it finds, waits until the plan is known to hold. Without a
  // gate it starts, first check included, before the Command is sent.
  std::optional<Guard> started;
  auto start_own_guard = [&]() -> core::Result<void> {
    auto made = Guard::start(state.guard_plan, std::move(state.quarantine), Guard::Watch::Yes,
                             options.gate ? Guard::FirstCheck::Later : Guard::FirstCheck::AtStart);
    if (!made) return std::unexpected(made.error());
    started.emplace(std::move(*made));
    return {};
  };
  if (!options.gate)
    if (auto r = start_own_guard(); !r) {
      state.used = false;  // pid 1 ran nothing: the sandbox is discarded as unused
      return std::unexpected(
          RunFailure{RunFailureKind::LaunchFailed, "the guard: " + r.error().describe()});
    }
  UniqueFd gate_read, gate_write;
  auto stdio = command_stdio(options, pipes, gate_read, gate_write);
  if (!stdio) {
    state.used = false;  // pid 1 ran nothing: the sandbox is discarded as unused
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, stdio.error().describe()});
  }
  std::optional<PtySetup> pty;
  if (terminal.plan.private_pty) pty = pty_setup(terminal.plan);
  if (auto sent = send_command(launch_fd, command, *stdio, pty); !sent) {
    state.used = false;  // pid 1 ran nothing: the sandbox is discarded as unused
    return std::unexpected(not_handed_over(launch_fd, sent.error().describe()));
  }
  pipes.write_out.reset();  // pid 1 has them now
  pipes.write_err.reset();
  gate_read.reset();
  if (options.gate) {
    if (auto r = start_own_guard(); !r) {
      state.kill_held();
      return std::unexpected(
          RunFailure{RunFailureKind::LaunchFailed, "the guard: " + r.error().describe()});
    }
    if (!options.gate()) {
      state.kill_held();
      return std::unexpected(RunFailure{RunFailureKind::Stale, "the sandbox made ahead is stale"});
    }
    started->first_check();
    if (started->failure()) {
      state.kill_held();
      return std::unexpected(
          RunFailure{RunFailureKind::LaunchFailed, "the guard: " + started->failure()->describe()});
    }
    open_gate(gate_write);
  }
  return std::move(*started);
}

/// Once every process of the sandbox is gone: reads `pipes` to their end (the output goes to
/// RunOptions::output) and what pid 1 reported and was not read yet into `report`.
void read_to_the_end(int launch_fd, OutputPipes& pipes, LaunchReport& report,
                     const RunOptions& options) {
  while (pipes.open()) {
    pollfd fds[2] = {{pipes.out ? pipes.out.get() : -1, POLLIN, 0},
                     {pipes.err ? pipes.err.get() : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    pipes.pump(*options.output);
  }
  while (read_records(launch_fd, report)) {
    pollfd pfd{launch_fd, POLLIN, 0};
    if (::poll(&pfd, 1, 0) <= 0) break;
  }
}

/// Once every process of the sandbox is gone, nothing can create a guarded name any more: the
/// supervisor's guard sweeps (when pid 1 has not: it was killed first) or looks at what only it
/// can know (git's discovery rules and the privilege bits in what the command changed), and its
/// notices and pid 1's are told through RunOptions::notice, the first 20 and then a count.
void tell_notices(Guard& guard, const LaunchReport& report, const RunOptions& options) {
  if (!report.swept)
    guard.final_sweep();
  else
    guard.final_discovery();
  std::vector<std::string> notices = guard.take_notices();
  if (!report.swept && guard.failure()) notices.push_back(incomplete_sweep(*guard.failure()));
  notices.insert(notices.end(), report.notices.begin(), report.notices.end());
  // A command that keeps making guarded names would flood the caller: the first lines, then a
  // count (the quarantine has them all).
  constexpr std::size_t kMaxNotices = 20;
  for (std::size_t i = 0; i < notices.size() && i < kMaxNotices; ++i)
    if (options.notice) options.notice(notices[i]);
  if (notices.size() > kMaxNotices && options.notice)
    options.notice("... and " + std::to_string(notices.size() - kMaxNotices) +
                   " more such lines: `pi-sandbox quarantine list` shows every entry");
}

/// The command's Outcome from how supervise() ended, what pid 1 reported, the cgroup's counters
/// and pid 1's wait status (`status`, 0 when its result came before its exit).
Outcome outcome_of(Ending ending, const LaunchReport& report, const LimitsReached& reached,
                   int status, const std::optional<core::Error>& live_failure) {
  if (ending == Ending::TimedOut) return std::unexpected(RunFailure{RunFailureKind::TimedOut, ""});
  if (ending == Ending::Aborted) return std::unexpected(RunFailure{RunFailureKind::Aborted, ""});
  if (ending == Ending::GuardFailed)
    return std::unexpected(RunFailure{
        RunFailureKind::GuardFailed,
        "the guard could not check or undo what the command made, so the command was stopped: " +
            (live_failure ? live_failure->describe() : std::string("no cause was kept"))});
  if (!report.error.empty())
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, report.error});
  // Out of memory, the whole sandbox was killed, whatever its command said last.
  if (reached.memory) return Signaled{SIGKILL};
  if (report.result) return *report.result;
  if (WIFEXITED(status)) return Exited{WEXITSTATUS(status)};
  return Signaled{WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL};
}

}  // namespace

Outcome run_command(ReadySandbox sandbox, const Command& command, const RunOptions& options) {
  ReadySandbox::State& state = *sandbox.state_;
  state.used = true;
  const Child& child = state.child;
  const int launch_fd = state.launch.get();
  const SandboxCgroup* cgroup = state.cgroup ? &*state.cgroup : nullptr;
  // A command run from a terminal gets a private pty (docs/security.md, "The terminal").
  // SIGWINCH is blocked before any thread of the command's starts (the proxy's), so that
  // each inherits the block and the relay's signalfd receives it.
  Terminal terminal{plan_terminal(terminal_facts(options)), {}};
  const BlockedSignal winch(terminal.plan.private_pty ? SIGWINCH : 0);
  OutputPipes pipes;
  auto handed = hand_over(state, command, options, pipes, terminal);
  if (!handed) return std::unexpected(handed.error());
  Guard& guard = *handed;
  LaunchReport report;
  Services services;
  const Ending ending =
      supervise(child, launch_fd, options, report, pipes, services, cgroup, terminal, guard);
  const bool handed_over = result_complete(report, pipes, terminal, options);
  const int status = handed_over ? 0 : wait_child(child);
  // Every process of the sandbox is gone: the rest of the pty's output, then the caller's
  // terminal as it was, before the proxy stops (a question on its threads may be waiting
  // for the terminal).
  terminal.relay.drain();
  terminal.relay.restore();
  if (!handed_over) {
    services.unix.reset();   // the command is gone: no call waits for the broker any more
    services.proxy.reset();  // stop the proxy and close its connections
  }
  // Every process of the sandbox is gone with pid 1, so the pipes reach end of file.
  read_to_the_end(launch_fd, pipes, report, options);
  core::phases::mark(core::phases::Mark::SandboxGone);
  const std::optional<core::Error> live_failure = guard.failure();
  tell_notices(guard, report, options);
  core::phases::mark(core::phases::Mark::GuardSwept);
  // The namespaces are gone with pid 1, so no mount holds the placeholders any more: they
  // are removed without unmounting. (pid 1 removes them itself when it is stopped or when
  // the supervisor dies; then this finds nothing left to do.)
  for (auto& p : report.placeholders) remove_placeholder(p, Unmask::No);
  // The cgroup's counters, read once now that every process of the sandbox is gone.
  const LimitsReached reached = cgroup != nullptr ? cgroup->reached() : LimitsReached{};
  report_limits(reached, report, options);
  report_direct_connection(state.counters, options);
  if (handed_over)
    options.teardown(
        std::make_shared<Teardown>(std::move(sandbox), std::move(services), std::move(guard)));
  return outcome_of(ending, report, reached, status, live_failure);
}

namespace {

Teardown::~Teardown() {
  wait_child(Child{sandbox.pid(), {}});
  services.unix.reset();
  services.proxy.reset();
}

}  // namespace

Outcome launch(LaunchSpec spec, const RunOptions& options) {
  spec.proxy_listeners = static_cast<bool>(options.proxy);
  const Command command = std::move(spec.command);
  auto sandbox = prepare_launch(std::move(spec));
  if (!sandbox) return std::unexpected(sandbox.error());
  return run_command(std::move(*sandbox), command, options);
}

}  // namespace pisandbox::sandbox::linux_
