// The sandbox where namespaces cannot be made (landlock_only.hpp).
#include "sandbox/linux/landlock_only.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

#include "core/deadline.hpp"
#include "core/scm_rights.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/linux/guard.hpp"
#include "sandbox/linux/protected_copies.hpp"
#include "sandbox/linux/unix_broker.hpp"
#include "sandbox/macos/launcher.hpp"
#include "sandbox/macos/loopback.hpp"
#include "sandbox/macos/runner.hpp"
#include "sandbox/output_pipes.hpp"

namespace pisandbox::sandbox::linux_ {

namespace fs = std::filesystem;
using core::UniqueFd;

namespace {

// ---- the probe -------------------------------------------------------------------------------

// The probe's children run after a fork of a process that may have threads: they only make
// system calls and write two bytes (the failing step and its errno) on the report pipe.
enum ProbeStep : char { kUnshare = 'u', kPrivateRoot = 'r', kProcMount = 'p', kFork = 'f' };

[[noreturn]] void probe_failed(int report, ProbeStep step) {
  const char record[2] = {step, static_cast<char>(errno)};
  (void)!::write(report, record, sizeof record);
  ::_exit(1);
}

/// In the probe's grandchild, pid 1 of the new pid namespace: a private `/`, then /proc.
[[noreturn]] void probe_proc_mount(int report) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    probe_failed(report, kPrivateRoot);
  if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    probe_failed(report, kProcMount);
  ::_exit(0);
}

/// In the probe's child: the namespaces, then the grandchild that mounts /proc.
[[noreturn]] void probe_namespaces(int report) {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0) probe_failed(report, kUnshare);
  const pid_t pid1 = ::fork();
  if (pid1 < 0) probe_failed(report, kFork);
  if (pid1 == 0) probe_proc_mount(report);
  int status = 0;
  while (::waitpid(pid1, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/// The text of a probe's report: the call and its errno.
std::string probe_text(const std::string& record) {
  if (record.size() < 2) return "the namespace probe failed";
  const int err = static_cast<unsigned char>(record[1]);
  switch (record[0]) {
    case kUnshare:
      return core::sys_error("unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID)", err).describe();
    case kPrivateRoot:
      return core::sys_error("mount(\"/\", MS_REC|MS_PRIVATE)", err).describe();
    case kProcMount:
      return core::sys_error("mount(\"proc\", \"/proc\")", err).describe();
    default:
      return core::sys_error("fork() in the namespace probe", err).describe();
  }
}

// ---- the plan ----------------------------------------------------------------------------------

bool is_ancestor_of_any(const fs::path& dir, const std::vector<fs::path>& paths) {
  return std::ranges::any_of(
      paths, [&](const fs::path& p) { return p != dir && policy::is_within(p, dir); });
}

/// Rules of `access` beneath `root` except beneath each of `hidden`: `root` whole when no hidden
/// path lies in it, else its entries, split alike.
void add_beneath(const fs::path& root, LandlockAccess access, const std::vector<fs::path>& hidden,
                 const ListDirectory& list, std::vector<LandlockRule>& rules, int depth = 0) {
  if (std::ranges::find(hidden, root) != hidden.end()) return;
  if (!is_ancestor_of_any(root, hidden) || depth > 32) {
    rules.push_back({root, access});
    return;
  }
  std::vector<std::string> names = list(root);
  std::ranges::sort(names);
  for (const auto& name : names) add_beneath(root / name, access, hidden, list, rules, depth + 1);
}

std::vector<fs::path> concealed_in(const policy::SandboxPolicy& policy, const fs::path& root) {
  std::vector<fs::path> out;
  for (const auto& c : policy.concealed)
    if (policy::is_within(c, root)) out.push_back(c);
  return out;
}

SeccompRule refuse_row(std::string name, std::vector<ArgCondition> conditions, std::string why) {
  return {std::move(name), std::move(conditions), EPERM, std::move(why)};
}

// ---- the run -----------------------------------------------------------------------------------

Outcome launch_failed(const std::string& step, const core::Error& error) {
  return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, step + ": " + error.describe()});
}

void send_record(int fd, LaunchMessage type, const std::string& text) {
  std::string record(1, static_cast<char>(type));
  record += text;
  (void)::send(fd, record.data(), record.size(), MSG_NOSIGNAL);
}

/// The children of this process, from /proc/<pid>/stat (field 4, after the command's name).
std::vector<pid_t> children_of_self() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream stat(std::string("/proc/") + entry->d_name + "/stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int parent = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &parent) == 2 && parent == self)
      out.push_back(static_cast<pid_t>(std::atoi(entry->d_name)));
  }
  ::closedir(proc);
  return out;
}

/// Kills every descendant of the reaper: they are all its children by now or become so when
/// their parent dies (PR_SET_CHILD_SUBREAPER), before wait returns that parent.
void kill_descendants() {
  for (;;) {
    for (const pid_t child : children_of_self()) ::kill(child, SIGKILL);
    if (::waitpid(-1, nullptr, 0) < 0 && errno == ECHILD) return;
  }
}

/// What the reaper does in the supervisor's place when the supervisor has died (SIGKILL): put
/// the protected paths back and remove the command's private directories.
struct Orphaned {
  const ProtectedCopies* held;
  fs::path private_root;
};

void clean_up_for(const LaunchSpec& spec, const Orphaned& orphaned) {
  if (auto quarantine = open_quarantine(spec.guard.quarantine); quarantine)
    (void)orphaned.held->put_back(*quarantine);
  std::error_code ignored;
  fs::remove_all(orphaned.private_root, ignored);
}

/// The reaper: the parent of the command, standing where pid 1 would. It reports the command's
/// status, then kills what is left; asked to stop (SIGTERM, also when the supervisor dies:
/// PR_SET_PDEATHSIG) it kills everything at once, and when the supervisor has died cleans
/// up in its place (clean_up_for()).
[[noreturn]] void reaper_main(const LaunchSpec& spec, int launch_fd, pid_t supervisor,
                              const Orphaned& orphaned) {
  sigset_t waited;
  sigemptyset(&waited);
  sigaddset(&waited, SIGTERM);
  sigaddset(&waited, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &waited, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != supervisor) ::_exit(125);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ::prctl(PR_SET_DUMPABLE, 0);
  for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE})
    ::signal(sig, SIG_IGN);
  // The filter of the command keeps it from signalling pi-sandbox's own processes.
  LaunchSpec own = spec;
  for (auto& row : own_process_rows({supervisor, ::getpid(), ::getpgrp()}, spec.landlock_abi))
    own.seccomp.push_back(std::move(row));
  const pid_t command = ::fork();
  if (command < 0) {
    send_record(launch_fd, LaunchMessage::Error, core::sys_error("fork()", errno).describe());
    ::_exit(125);
  }
  if (command == 0) exec_direct(own, launch_fd);
  for (bool done = false; !done;) {
    siginfo_t info{};
    if (::sigwaitinfo(&waited, &info) < 0) continue;
    if (info.si_signo == SIGTERM) break;
    // One SIGCHLD may stand for several children (orphans of the command are ours too).
    int status = 0;
    for (pid_t child; !done && (child = ::waitpid(-1, &status, WNOHANG)) > 0;) {
      if (child != command) continue;
      send_record(launch_fd, LaunchMessage::Result,
                  WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                    : "signal " + std::to_string(WTERMSIG(status)));
      done = true;
    }
  }
  kill_descendants();
  // Our parent is another process now: the supervisor died and nothing else will clean up.
  if (::getppid() != supervisor) clean_up_for(spec, orphaned);
  ::_exit(0);
}

/// What the supervisor learns from the reaper and the command.
struct Report {
  std::string error;
  std::optional<std::variant<Exited, Signaled>> result;
  std::optional<UnixBrokerChannels> unix;
};

/// Reads every pending record; returns false at end of stream.
bool read_records(int fd, Report& report) {
  for (LaunchRecord record;;) {
    const Received received = receive_record(fd, record);
    if (received != Received::Record) return received == Received::Nothing;
    switch (record.kind) {
      case LaunchMessage::Error:
        report.error = record.text;
        break;
      case LaunchMessage::Result:
        if (auto result = parse_result(record.text)) report.result = *result;
        break;
      case LaunchMessage::UnixBroker:
        if (record.fds.size() == 2)
          report.unix = UnixBrokerChannels{std::move(record.fds[0]), std::move(record.fds[1])};
        break;
      default:
        break;
    }
  }
}

enum class Ending { Exited, TimedOut, Aborted, GuardFailed };

struct Reaper {
  pid_t pid = -1;
  UniqueFd pidfd;
};

/// How long the reaper gets to kill the command's processes after SIGTERM.
constexpr int kStopGraceMs = 5000;

void stop_reaper(const Reaper& reaper) {
  ::kill(reaper.pid, SIGTERM);
  pollfd pfd{reaper.pidfd.get(), POLLIN, 0};
  if (::poll(&pfd, 1, kStopGraceMs) <= 0) ::kill(reaper.pid, SIGKILL);
}

/// The supervisor's loop: output, the guard, the broker's channels, the timeout, cancellation.
Ending supervise(const Reaper& reaper, int launch_fd, const RunOptions& options, Report& report,
                 OutputPipes& pipes, const HostNetwork& network,
                 std::unique_ptr<UnixBroker>& broker, Guard& guard) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      options.timeout ? std::optional(Clock::now() + *options.timeout) : std::nullopt;
  bool socket_open = true;
  for (;;) {
    pollfd fds[6] = {{reaper.pidfd.get(), POLLIN, 0},
                     {socket_open ? launch_fd : -1, POLLIN, 0},
                     {options.cancel_fd, POLLIN, 0},
                     {pipes.out ? pipes.out.get() : -1, POLLIN, 0},
                     {pipes.err ? pipes.err.get() : -1, POLLIN, 0},
                     {guard.fd(), POLLIN, 0}};
    const int wait_ms = core::poll_timeout(deadline);
    if (wait_ms == 0) {
      stop_reaper(reaper);
      return Ending::TimedOut;
    }
    if (::poll(fds, 6, wait_ms) < 0 && errno != EINTR) continue;
    if (fds[5].revents != 0) guard.on_events();
    if (guard.failure() && !report.result) {
      stop_reaper(reaper);
      return Ending::GuardFailed;
    }
    if (fds[3].revents != 0 || fds[4].revents != 0) pipes.pump(*options.output);
    if (fds[1].revents != 0) socket_open = read_records(launch_fd, report);
    if (report.unix) {
      report.unix->host_network = network;
      broker = UnixBroker::start(std::move(*report.unix), options.host_socket);
      report.unix.reset();
    }
    if (fds[2].revents != 0) {
      stop_reaper(reaper);
      return Ending::Aborted;
    }
    if (fds[0].revents != 0) return Ending::Exited;
  }
}

/// `env` with TMPDIR, TMP and TEMP set to `temp_dir`, and HOME to `home_layer` unless empty.
std::vector<std::string> with_private_dirs(std::vector<std::string> env, const fs::path& temp_dir,
                                           const fs::path& home_layer) {
  std::erase_if(env, [&](const std::string& entry) {
    return entry.starts_with("TMPDIR=") || entry.starts_with("TMP=") ||
           entry.starts_with("TEMP=") || (!home_layer.empty() && entry.starts_with("HOME="));
  });
  for (const char* name : {"TMPDIR=", "TMP=", "TEMP="}) env.push_back(name + temp_dir.string());
  if (!home_layer.empty()) env.push_back("HOME=" + home_layer.string());
  return env;
}

/// Reports the guard's lines and `more`, at most kMaxNotices and a count.
void report_notices(Guard& guard, const std::vector<std::string>& more, const RunOptions& options) {
  std::vector<std::string> notices = guard.take_notices();
  notices.insert(notices.end(), more.begin(), more.end());
  if (const auto& failure = guard.failure()) notices.push_back(incomplete_sweep(*failure));
  constexpr std::size_t kMaxNotices = 20;
  for (std::size_t i = 0; i < notices.size() && i < kMaxNotices; ++i)
    if (options.notice) options.notice(notices[i]);
  if (notices.size() > kMaxNotices && options.notice)
    options.notice("... and " + std::to_string(notices.size() - kMaxNotices) +
                   " more such lines: `pi-sandbox quarantine list` shows every entry");
}

Outcome to_outcome(Ending ending, const Report& report, const std::optional<core::Error>& failure,
                   int status) {
  if (ending == Ending::TimedOut) return std::unexpected(RunFailure{RunFailureKind::TimedOut, ""});
  if (ending == Ending::Aborted) return std::unexpected(RunFailure{RunFailureKind::Aborted, ""});
  if (ending == Ending::GuardFailed)
    return std::unexpected(RunFailure{
        RunFailureKind::GuardFailed,
        "the guard could not check or undo what the command made, so the command was stopped: " +
            (failure ? failure->describe() : std::string())});
  if (!report.error.empty())
    return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, report.error});
  if (report.result) return *report.result;
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return std::unexpected(
        RunFailure{RunFailureKind::LaunchFailed,
                   "the reaper exited with " + std::to_string(WEXITSTATUS(status))});
  return Signaled{SIGKILL};
}

core::Result<Reaper> fork_reaper(const LaunchSpec& spec, int child_end, int parent_end,
                                 const Orphaned& orphaned) {
  const pid_t supervisor = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return core::fail_errno("fork() of the reaper");
  if (pid == 0) {
    ::close(parent_end);
    reaper_main(spec, child_end, supervisor, orphaned);
  }
  Reaper reaper{pid, UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)))};
  if (!reaper.pidfd) {
    const int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return std::unexpected(core::sys_error("pidfd_open(the reaper)", err));
  }
  return reaper;
}

}  // namespace

std::string namespaces_refused() {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return core::sys_error("pipe2()", errno).describe();
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  const pid_t child = ::fork();
  if (child < 0) return core::sys_error("fork()", errno).describe();
  if (child == 0) probe_namespaces(write_end.get());
  write_end.reset();
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = ::read(read_end.get(), buffer, sizeof buffer)) > 0;)
    text.append(buffer, static_cast<std::size_t>(n));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  return probe_text(text);
}

KernelCheck landlock_only_check() {
  KernelCheck check{"the weaker sandbox (where namespaces cannot be made)", true, false, "", ""};
  const std::string refused = namespaces_refused();
  if (refused.empty()) {
    check.detail = "not needed: the namespaces can be made, the full sandbox runs";
    return check;
  }
  check.ok = false;
  const int abi = landlock_abi_version();
  const std::string& broker = unix_broker_unsupported();
  if (abi == 0 || !broker.empty()) {
    check.required = true;
    check.detail =
        "cannot run either: " +
        (abi == 0 ? std::string("Landlock is unavailable") : "no socket broker: " + broker) +
        "; no command runs here";
    check.fix =
        "make the namespaces available (see the items above), or boot with Landlock "
        "(lsm=...,landlock)";
    return check;
  }
  check.detail = "runs every command meanwhile (" + refused + "; Landlock ABI " +
                 std::to_string(abi) +
                 "); what it cannot give: " + std::string(kLandlockOnlyLimits);
  check.fix =
      "make the namespaces available (see the items above) for the full sandbox; "
      "docs/security.md, \"Where namespaces cannot be made\"";
  return check;
}

std::vector<std::string> list_host_directory(const fs::path& dir) {
  std::vector<std::string> names;
  DIR* handle = ::opendir(dir.c_str());
  if (handle == nullptr) return names;
  while (const dirent* entry = ::readdir(handle)) {
    const std::string_view name = entry->d_name;
    // A symbolic link is no rule's business: its target is covered where it lies, or not at all
    // (/dev/stderr leads to a pipe, which Landlock refuses: EBADFD).
    if (name != "." && name != ".." && entry->d_type != DT_LNK) names.emplace_back(name);
  }
  ::closedir(handle);
  return names;
}

std::vector<fs::path> landlock_only_hidden(const policy::SandboxPolicy& policy) {
  std::vector<fs::path> hidden = {"/tmp", "/var/tmp", "/dev/shm", "/run/user"};
  if (policy.hide_home && policy.home != "/") {
    hidden.push_back(policy.home);
    // A home reached through a symbolic link is hidden where it really is, too.
    std::error_code error;
    if (const fs::path real = fs::canonical(policy.home, error); !error && real != policy.home)
      hidden.push_back(real);
  }
  return hidden;
}

LandlockPlan plan_landlock_only(const policy::SandboxPolicy& policy, const PrivatePlaces& places,
                                std::span<const std::uint16_t> proxy_ports,
                                const ListDirectory& list) {
  LandlockPlan plan;
  add_beneath("/", LandlockAccess::ReadExecute, landlock_only_hidden(policy), list, plan.rules);
  for (const auto& e : policy.home_read_allowed)
    add_beneath(e.path, LandlockAccess::ReadExecute, concealed_in(policy, e.path), list,
                plan.rules);
  for (const auto& e : policy.writable)
    add_beneath(e.path, LandlockAccess::ReadWrite, concealed_in(policy, e.path), list, plan.rules);
  plan.rules.push_back({places.temp_dir, LandlockAccess::ReadWrite});
  // pi-sandbox itself stays runnable (`pi-sandbox proxy-connect` is the SSH ProxyCommand,
  // docs/network.md) where it lies in a closed place (a test stage or an unpacked release in
  // /tmp); in the home the policy re-exposes it already.
  for (const auto& p : policy.protected_paths)
    if (p.reason == policy::ProtectReason::SandboxBinary)
      plan.rules.push_back({p.path, LandlockAccess::ReadExecute});
  if (!places.home_layer.empty())
    plan.rules.push_back({places.home_layer, LandlockAccess::ReadWrite});
  for (const char* device : {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
                             "/dev/tty", "/dev/ptmx", "/dev/pts"})
    plan.rules.push_back({device, LandlockAccess::ReadWrite});
  plan.restrict_tcp_connect = true;
  plan.connect_ports.assign(proxy_ports.begin(), proxy_ports.end());
  return plan;
}

std::vector<SeccompRule> landlock_only_seccomp_rules() {
  std::vector<SeccompRule> rules = seccomp_rules(UnixSockets::Brokered);
  constexpr std::uint64_t kLow32 = 0xffffffffULL, kType = 0xf;
  const std::string datagram =
      "no inet datagram or raw sockets: the host's network, and sendto() names any destination";
  for (const int family : {AF_INET, AF_INET6})
    for (const int type : {SOCK_DGRAM, SOCK_RAW})
      rules.push_back(refuse_row(
          "socket", {{0, kLow32, std::uint64_t(family)}, {1, kType, std::uint64_t(type)}},
          datagram));
  rules.push_back(
      refuse_row("socket", {{0, kLow32, AF_PACKET}}, "no packet sockets on the host's network"));
  const std::string fast_open = "no TCP Fast Open: it connects without connect()";
  rules.push_back(refuse_row("sendto", {{3, MSG_FASTOPEN, MSG_FASTOPEN}}, fast_open));
  rules.push_back(refuse_row("sendmsg", {{2, MSG_FASTOPEN, MSG_FASTOPEN}}, fast_open));
  rules.push_back(refuse_row("sendmmsg", {{3, MSG_FASTOPEN, MSG_FASTOPEN}}, fast_open));
  return rules;
}

std::vector<SeccompRule> own_process_rows(const OwnProcesses& own, int landlock_abi) {
  constexpr std::uint64_t kLow32 = 0xffffffffULL;
  const auto low = [](pid_t pid) {
    return static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid));
  };
  const std::string why = "no signal to pi-sandbox's own processes (the host's pid namespace)";
  std::vector<SeccompRule> rows;
  for (const char* call : {"kill", "rt_sigqueueinfo"})
    for (const pid_t target :
         {own.supervisor, own.reaper, static_cast<pid_t>(-own.group), pid_t{0}, pid_t{-1}})
      rows.push_back(refuse_row(call, {{0, kLow32, low(target)}}, why));
  for (const char* call : {"tgkill", "rt_tgsigqueueinfo"})
    for (const pid_t target : {own.supervisor, own.reaper})
      rows.push_back(refuse_row(call, {{0, kLow32, low(target)}}, why));
  rows.push_back(refuse_row("tkill", {}, why));
  for (const pid_t target : {own.supervisor, own.reaper})
    rows.push_back(refuse_row("pidfd_open", {{0, kLow32, low(target)}}, why));
  if (landlock_abi < 6) rows.push_back(refuse_row("pidfd_send_signal", {}, why));
  return rows;
}

Outcome run_landlock_only(const policy::SandboxPolicy& policy, LaunchSpec spec,
                          const RunOptions& options) {
  if (spec.landlock_abi == 0)
    return launch_failed("the weaker sandbox", core::Error{"Landlock is unavailable", "", 0});
  if (const std::string& missing = unix_broker_unsupported(); !missing.empty())
    return launch_failed("the weaker sandbox",
                         core::Error{"the kernel cannot broker sockets: " + missing, "", 0});
  if (policy.home_read_only)
    return launch_failed("the weaker sandbox",
                         core::Error{"the workspace is or contains the home",
                                     "hint: run from a project directory", 0});
  auto dirs = macos::make_private_dirs(macos::private_dirs_parent());
  if (!dirs) return launch_failed("the private temporary directory", dirs.error());
  auto loopback = macos::open_loopback_proxy();
  if (!loopback) return launch_failed("the proxy's listeners and credential", loopback.error());
  const std::uint16_t ports[] = {loopback->http.port, loopback->socks.port};
  const policy::ProxyEndpoints endpoints{ports[0], ports[1], proxy::userinfo(loopback->credential)};
  // The hidden home is replaced by the private home layer, with links to what the policy
  // re-exposes (as on macOS: docs/macos.md), so that tools have a home to write their caches in.
  const fs::path home_layer = policy.hide_home ? dirs->home_layer() : fs::path();
  if (!home_layer.empty())
    if (auto linked = macos::make_home_links(macos::plan_home_links(
            policy, macos::SeatbeltInputs{dirs->temp_dir(), home_layer, ports[0], ports[1], {}}));
        !linked)
      return launch_failed("the home layer", linked.error());
  spec.command.env =
      with_private_dirs(macos::with_proxy_environment(spec.command.env, policy, endpoints),
                        dirs->temp_dir(), home_layer);
  spec.landlock =
      plan_landlock_only(policy, {dirs->temp_dir(), home_layer}, ports, list_host_directory);
  spec.seccomp = landlock_only_seccomp_rules();
  spec.rlimit_nproc = 0;  // counted per user on the host: the user's other processes count too
  const HostNetwork network{true, {ports[0], ports[1]}, spec.landlock_abi >= 6};
  auto quarantine = open_quarantine(spec.guard.quarantine);
  if (!quarantine) return launch_failed("the guard's quarantine", quarantine.error());
  auto guard = Guard::start(spec.guard, std::move(*quarantine), Guard::Watch::Yes);
  if (!guard) return launch_failed("the guard", guard.error());
  // What the full sandbox binds read-only in the writable roots is kept as a copy the command
  // cannot reach (beside the private directories, where no Landlock rule leads) and put back
  // after it.
  const fs::path store = dirs->temp_dir().parent_path() / "held";
  if (::mkdir(store.c_str(), 0700) != 0)
    return launch_failed("the copies of the protected paths",
                         core::sys_error("mkdir(" + store.string() + ")", errno));
  auto held =
      ProtectedCopies::take(held_in_writable_roots(spec.mounts, spec.guard.writable_roots), store);
  if (!held) return launch_failed("the copies of the protected paths", held.error());
  // No mount is made here: the plan's tmpfs targets (/tmp, the home) are the host's file systems,
  // which the Unix-socket broker must not take for the sandbox's own (private_devices()).
  spec.mounts = MountPlan{};
  OutputPipes pipes;
  if (options.output != nullptr) {
    auto made = OutputPipes::create(options.stderr_route);
    if (!made) return launch_failed("the output pipes", made.error());
    pipes = std::move(*made);
    spec.direct_stdio[1] = pipes.write_out.get();
    spec.direct_stdio[2] = pipes.write_err.get();
  }
  spec.direct_stdio[0] = options.stdin_fd;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    return launch_failed("the launch socket", core::sys_error("socketpair(AF_UNIX)", errno));
  UniqueFd parent_end(pair[0]), child_end(pair[1]);
  auto reaper = fork_reaper(spec, child_end.get(), parent_end.get(),
                            Orphaned{&*held, dirs->temp_dir().parent_path()});
  if (!reaper) return launch_failed("the reaper", reaper.error());
  child_end.reset();
  pipes.write_out.reset();
  pipes.write_err.reset();
  auto running = macos::start_loopback_proxy(options, *loopback);
  if (!running) {
    stop_reaper(*reaper);
    ::waitpid(reaper->pid, nullptr, 0);
    return launch_failed("the proxy", running.error());
  }
  Report report;
  std::unique_ptr<UnixBroker> broker;
  const Ending ending =
      supervise(*reaper, parent_end.get(), options, report, pipes, network, broker, *guard);
  int status = 0;
  while (::waitpid(reaper->pid, &status, 0) < 0 && errno == EINTR) {
  }
  broker.reset();
  running->reset();
  while (pipes.open()) {
    pollfd fds[2] = {{pipes.out ? pipes.out.get() : -1, POLLIN, 0},
                     {pipes.err ? pipes.err.get() : -1, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    pipes.pump(*options.output);
  }
  while (read_records(parent_end.get(), report)) {
    pollfd pfd{parent_end.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 0) <= 0) break;
  }
  const std::optional<core::Error> live_failure = guard->failure();
  guard->final_sweep();
  std::vector<std::string> lines;
  if (auto quarantine_again = open_quarantine(spec.guard.quarantine); quarantine_again)
    lines = held->put_back(*quarantine_again);
  else
    lines.push_back("could not open the quarantine to put the protected paths back: " +
                    quarantine_again.error().describe());
  report_notices(*guard, lines, options);
  return to_outcome(ending, report, live_failure, status);
}

}  // namespace pisandbox::sandbox::linux_
