// The macOS applier (launcher.hpp): plain POSIX, built on every platform.
#include "sandbox/macos/launcher.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <optional>
#include <system_error>
#include <thread>

#include "core/deadline.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/output_pipes.hpp"

namespace pisandbox::sandbox::macos {

namespace fs = std::filesystem;
using core::UniqueFd;
using Clock = std::chrono::steady_clock;

PrivateDirs::PrivateDirs(fs::path temp_dir, fs::path home_layer)
    : temp_dir_(std::move(temp_dir)), home_layer_(std::move(home_layer)) {}

PrivateDirs::PrivateDirs(PrivateDirs&& other) noexcept
    : temp_dir_(std::move(other.temp_dir_)), home_layer_(std::move(other.home_layer_)) {
  other.temp_dir_.clear();
  other.home_layer_.clear();
}

PrivateDirs::~PrivateDirs() {
  if (temp_dir_.empty()) return;
  std::error_code ignored;
  fs::remove_all(temp_dir_.parent_path(), ignored);  // pi-sandbox.XXXXXX, with tmp/ and home/
}

namespace {

core::Result<fs::path> real_path(const fs::path& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr)
    return core::fail_errno("realpath(" + path.string() + ")");
  return fs::path(resolved);
}

core::Result<void> make_dir(const fs::path& path) {
  if (::mkdir(path.c_str(), 0700) != 0) return core::fail_errno("mkdir(" + path.string() + ")");
  return {};
}

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

Outcome launch_failed(const std::string& message) {
  return std::unexpected(RunFailure{RunFailureKind::LaunchFailed, message});
}

/// A pipe whose ends a spawned command does not inherit (macOS has no pipe2(2); its spawns use
/// POSIX_SPAWN_CLOEXEC_DEFAULT, which closes them anyway). Errors: `pipe()`, `fcntl(FD_CLOEXEC)`.
core::Result<std::pair<UniqueFd, UniqueFd>> cloexec_pipe() {
  int fds[2];
  if (::pipe(fds) != 0) return core::fail_errno("pipe()");
  std::pair<UniqueFd, UniqueFd> ends{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (const int fd : fds)
    if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return core::fail_errno("fcntl(FD_CLOEXEC)");
  return ends;
}

/// posix_spawn(2)'s attributes and file actions, destroyed with this object.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

/// Fills `setup`: a new process group led by the command; the signal mask empty and every
/// disposition the default (`run` blocks SIGINT, SIGTERM and SIGHUP for its signalfd, serve
/// ignores SIGPIPE: neither may reach the command); `stdio` (-1: the caller's own) on fds 0-2
/// and no other descriptor; then `cwd`. Returns the first error number, or 0.
int prepare_spawn(SpawnSetup& setup, const fs::path& cwd, const int (&stdio)[3]) {
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#ifdef POSIX_SPAWN_CLOEXEC_DEFAULT
  flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;  // Apple: only the descriptors named below are inherited
#endif
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  int error = posix_spawnattr_setflags(&setup.attr, flags);
  if (error == 0) error = posix_spawnattr_setpgroup(&setup.attr, 0);
  if (error == 0) error = posix_spawnattr_setsigmask(&setup.attr, &none);
  if (error == 0) error = posix_spawnattr_setsigdefault(&setup.attr, &all);
  for (int target = 0; target < 3 && error == 0; ++target) {
    if (stdio[target] >= 0)
      error = posix_spawn_file_actions_adddup2(&setup.actions, stdio[target], target);
#ifdef POSIX_SPAWN_CLOEXEC_DEFAULT
    else
      error = posix_spawn_file_actions_addinherit_np(&setup.actions, target);
#endif
  }
#ifndef POSIX_SPAWN_CLOEXEC_DEFAULT
  // glibc 2.34 and later: what the caller left without close-on-exec stays with the caller.
  if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&setup.actions, 3);
#endif
  if (error == 0) error = posix_spawn_file_actions_addchdir_np(&setup.actions, cwd.c_str());
  return error;
}

core::Result<pid_t> spawn(const LaunchPlan& plan, const fs::path& cwd, const int (&stdio)[3]) {
  const std::string call = "posix_spawn(" + plan.argv[0] + ") in " + cwd.string();
  SpawnSetup setup;
  if (const int error = prepare_spawn(setup, cwd, stdio); error != 0)
    return std::unexpected(core::sys_error(call + ": preparing the spawn", error));
  auto argv = pointers(plan.argv);
  auto env = pointers(plan.env);
  pid_t pid = 0;
  if (const int error =
          ::posix_spawn(&pid, argv[0], &setup.actions, &setup.attr, argv.data(), env.data());
      error != 0)
    return std::unexpected(core::sys_error(call, error));
  return pid;
}

/// The command's process group while it runs. A thread waits for the leader to end without
/// reaping it (waitid(2) with WNOWAIT) and then closes the write end of a pipe, so that poll(2)
/// sees the end (no sleep-poll, no SIGCHLD handler) while the zombie leader keeps the group's id
/// for kill(-leader): no other process can be given that id before reap().
class Group {
 public:
  explicit Group(pid_t leader) : leader_(leader) {}
  ~Group() { (void)reap(); }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  /// Starts the watching thread. Errors: `pipe()`, `fcntl(FD_CLOEXEC)`, `std::thread: <what>`.
  core::Result<void> watch() {
    auto ends = cloexec_pipe();
    if (!ends) return std::unexpected(ends.error());
    ended_ = std::move(ends->first);
    try {
      watcher_ = std::thread([leader = leader_, write_end = std::move(ends->second)]() mutable {
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(leader), &info, WEXITED | WNOWAIT) != 0 &&
               errno == EINTR) {
        }
        write_end.reset();  // the reader sees end of file
      });
    } catch (const std::system_error& e) {
      return core::fail(std::string("std::thread: ") + e.what());
    }
    return {};
  }

  /// Readable (end of file) once the leader has ended.
  [[nodiscard]] int ended_fd() const { return ended_.get(); }

  /// SIGKILL to every process of the group that is still running.
  void kill() const { ::kill(-leader_, SIGKILL); }

  /// Kills what is left of the group, waits for the leader and reaps it; its wait status, or
  /// nullopt when it could not be read (reaped elsewhere: SIGCHLD ignored). Once; later calls
  /// return the same.
  std::optional<int> reap() {
    if (reaped_) return status_;
    reaped_ = true;
    kill();
    if (watcher_.joinable()) watcher_.join();
    int status = 0;
    pid_t done;
    while ((done = ::waitpid(leader_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (done == leader_) status_ = status;
    return status_;
  }

 private:
  pid_t leader_;
  UniqueFd ended_;
  std::thread watcher_;
  bool reaped_ = false;
  std::optional<int> status_;
};

/// Why supervise() returned.
enum class Finish { Exited, TimedOut, Aborted };

/// Reads the output while the leader runs; returns at its end, the timeout or a cancel.
Finish supervise(const Group& group, const RunOptions& options, OutputPipes& pipes) {
  const auto deadline =
      options.timeout ? std::optional(Clock::now() + *options.timeout) : std::nullopt;
  for (;;) {
    pollfd fds[4] = {{group.ended_fd(), POLLIN, 0},
                     {options.cancel_fd, POLLIN, 0},
                     {pipes.out ? pipes.out.get() : -1, POLLIN, 0},
                     {pipes.err ? pipes.err.get() : -1, POLLIN, 0}};
    const int wait_ms = core::poll_timeout(deadline);
    if (wait_ms == 0) return Finish::TimedOut;
    if (::poll(fds, 4, wait_ms) < 0 && errno != EINTR) continue;
    if (fds[2].revents != 0 || fds[3].revents != 0) pipes.pump(*options.output);
    if (fds[1].revents != 0) return Finish::Aborted;
    if (fds[0].revents != 0) return Finish::Exited;
  }
}

}  // namespace

core::Result<PrivateDirs> make_private_dirs(const fs::path& parent) {
  std::string pattern = (parent / "pi-sandbox.XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return core::fail_errno("mkdtemp(" + pattern + ")");
  auto top = real_path(pattern);
  if (!top) {
    ::rmdir(pattern.c_str());
    return std::unexpected(top.error());
  }
  // From here the directories are removed with `dirs` on any failure.
  PrivateDirs dirs(*top / "tmp", *top / "home");
  if (auto made = make_dir(dirs.temp_dir()); !made) return std::unexpected(made.error());
  if (auto made = make_dir(dirs.home_layer()); !made) return std::unexpected(made.error());
  return dirs;
}

Outcome launch(const LaunchPlan& plan, const fs::path& cwd, const RunOptions& options) {
  if (plan.argv.empty()) return launch_failed("launch: empty argv");
  OutputPipes pipes;
  if (options.output != nullptr) {
    auto made = OutputPipes::create(options.stderr_route);
    if (!made) return launch_failed(made.error().describe());
    pipes = std::move(*made);
  }
  const int stdio[3] = {options.stdin_fd, pipes.write_out ? pipes.write_out.get() : -1,
                        pipes.write_err ? pipes.write_err.get() : -1};
  auto pid = spawn(plan, cwd, stdio);
  pipes.write_out.reset();  // the command has them now
  pipes.write_err.reset();
  if (!pid) return launch_failed(pid.error().describe());
  Group group(*pid);
  if (auto watched = group.watch(); !watched)
    return launch_failed(watched.error().describe());  // ~Group kills and reaps the command
  const Finish finish = supervise(group, options, pipes);
  // The command is over (or is being stopped): what it left running in its group goes with it.
  const std::optional<int> status = group.reap();
  if (options.output != nullptr) pipes.drain(*options.output);
  if (finish == Finish::TimedOut) return std::unexpected(RunFailure{RunFailureKind::TimedOut, ""});
  if (finish == Finish::Aborted) return std::unexpected(RunFailure{RunFailureKind::Aborted, ""});
  if (status && WIFEXITED(*status)) return Exited{WEXITSTATUS(*status)};
  if (status && WIFSIGNALED(*status)) return Signaled{WTERMSIG(*status)};
  return Signaled{SIGKILL};
}

}  // namespace pisandbox::sandbox::macos
