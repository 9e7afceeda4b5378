#include "process/host_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/deadline.hpp"
#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/output_pipes.hpp"

namespace pisandbox::process {

namespace {

using core::UniqueFd;
using Clock = std::chrono::steady_clock;

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

sandbox::Outcome launch_failed(const std::string& message) {
  return std::unexpected(sandbox::RunFailure{sandbox::RunFailureKind::LaunchFailed, message});
}

/// The caller's terminal while the host run is its foreground process group.
class ForegroundTerminal {
 public:
  /// Hands the terminal on stdin to `group` if the caller is its foreground group.
  explicit ForegroundTerminal(pid_t group) {
    if (::isatty(STDIN_FILENO) == 0) return;
    const pid_t foreground = ::tcgetpgrp(STDIN_FILENO);
    if (foreground < 0 || foreground != ::getpgrp()) return;
    if (::tcsetpgrp(STDIN_FILENO, group) == 0) previous_ = foreground;
  }
  ~ForegroundTerminal() {
    if (previous_ < 0) return;
    // A background group that changes the foreground group gets SIGTTOU (termios(3)).
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTTOU);
    ::pthread_sigmask(SIG_BLOCK, &block, &old);
    (void)::tcsetpgrp(STDIN_FILENO, previous_);
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  ForegroundTerminal(const ForegroundTerminal&) = delete;
  ForegroundTerminal& operator=(const ForegroundTerminal&) = delete;

 private:
  pid_t previous_ = -1;
};

/// A watcher process that kills the host run's process group if pi-sandbox dies first (even
/// by SIGKILL, when nothing of pi-sandbox runs any more): it waits on a pipe whose only
/// write end pi-sandbox holds. done() tells it the group is already handled.
class GroupGuard {
 public:
  explicit GroupGuard(pid_t group) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return;
    const pid_t watcher = ::fork();
    if (watcher == 0) {
      // Only async-signal-safe calls: the caller may have threads. Its own session, with
      // every signal blocked, so Ctrl-C at the terminal does not stop the watcher first.
      // Nothing but the read end stays open: a copy of any other descriptor (an output
      // pipe's write end, the exec status pipe) would keep its reader waiting.
      if (p[0] != 3) {
        ::dup2(p[0], 3);
        ::close(p[0]);
      }
      ::syscall(SYS_close_range, 4U, ~0U, 0U);
      for (int fd = 0; fd < 3; ++fd) ::close(fd);
      ::setsid();
      sigset_t all;
      sigfillset(&all);
      ::sigprocmask(SIG_SETMASK, &all, nullptr);
      char byte;
      ssize_t n;
      while ((n = ::read(3, &byte, 1)) < 0 && errno == EINTR) {
      }
      if (n == 0) ::kill(-group, SIGKILL);  // end of file: pi-sandbox is gone
      ::_exit(0);
    }
    ::close(p[0]);
    if (watcher < 0) {
      ::close(p[1]);
      return;
    }
    watcher_ = watcher;
    write_end_.reset(p[1]);
  }
  /// The group has been killed and reaped here: the watcher leaves without killing.
  void done() {
    if (watcher_ < 0) return;
    (void)!::write(write_end_.get(), "x", 1);
    write_end_.reset();
    while (::waitpid(watcher_, nullptr, 0) < 0 && errno == EINTR) {
    }
    watcher_ = -1;
  }
  ~GroupGuard() { done(); }
  GroupGuard(const GroupGuard&) = delete;
  GroupGuard& operator=(const GroupGuard&) = delete;

 private:
  pid_t watcher_ = -1;
  UniqueFd write_end_;
};

/// The steps of starting the program, as reported through the exec status pipe.
enum class StartStep : int { Dup2 = 0, Chdir = 1, Execve = 2 };

/// Forks `command` as the leader of a new process group with `stdio` (-1: inherited) and
/// waits until it has exec'd. Errors: `dup2()`, `chdir("<cwd>")` or `execve("<program>")`
/// with errno (the child is reaped), `pipe2()` or `fork()`.
core::Result<pid_t> start_group(const sandbox::Command& command, const int (&stdio)[3]) {
  // An exec failure is reported through this pipe (closed on a successful exec).
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return core::fail_errno("pipe2()");
  UniqueFd status_read(status_pipe[0]), status_write(status_pipe[1]);
  auto argv = c_strings(command.argv);
  auto envp = c_strings(command.env);
  const std::string cwd = command.cwd.string();

  const pid_t pid = ::fork();
  if (pid < 0) return core::fail_errno("fork()");
  if (pid == 0) {
    // Only async-signal-safe calls from here to execve (the caller may have threads).
    ::setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    int report[2] = {0, static_cast<int>(StartStep::Dup2)};
    for (int target = 0; target < 3 && report[0] == 0; ++target)
      if (stdio[target] >= 0 && ::dup2(stdio[target], target) < 0) report[0] = errno;
    if (report[0] == 0 && ::chdir(cwd.c_str()) != 0) {
      report[0] = errno;
      report[1] = static_cast<int>(StartStep::Chdir);
    }
    if (report[0] == 0) {
      ::execve(argv[0], argv.data(), envp.data());
      report[0] = errno;
      report[1] = static_cast<int>(StartStep::Execve);
    }
    (void)::write(status_write.get(), report, sizeof report);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // both sides set it: no window where a kill(-pid) misses
  status_write.reset();
  int report[2] = {0, 0};
  ssize_t got;
  while ((got = ::read(status_read.get(), report, sizeof report)) < 0 && errno == EINTR) {
  }
  if (got != sizeof report) return pid;  // end of file: exec'd
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  switch (static_cast<StartStep>(report[1])) {
    case StartStep::Chdir:
      return std::unexpected(core::sys_error("chdir(\"" + cwd + "\")", report[0]));
    case StartStep::Execve:
      return std::unexpected(core::sys_error("execve(\"" + command.argv[0] + "\")", report[0]));
    case StartStep::Dup2:
      break;
  }
  return std::unexpected(core::sys_error("dup2()", report[0]));
}

enum class Ending { Exited, TimedOut, Aborted };

}  // namespace

sandbox::Outcome run_on_host(const sandbox::Command& command, const sandbox::RunOptions& options) {
  if (command.argv.empty()) return launch_failed("run_on_host: empty argv");
  sandbox::OutputPipes pipes;
  if (options.output != nullptr) {
    auto made = sandbox::OutputPipes::create(options.stderr_route);
    if (!made) return launch_failed(made.error().message);
    pipes = std::move(*made);
  }
  const int stdio[3] = {options.stdin_fd, pipes.write_out ? pipes.write_out.get() : -1,
                        pipes.write_err ? pipes.write_err.get() : -1};
  auto started = start_group(command, stdio);
  pipes.write_out.reset();  // the program has them now
  pipes.write_err.reset();
  if (!started) return launch_failed(started.error().message);
  const pid_t pid = *started;

  GroupGuard guard(pid);
  ForegroundTerminal terminal(pid);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  const auto deadline =
      options.timeout ? std::optional(Clock::now() + *options.timeout) : std::nullopt;
  Ending ending = Ending::Exited;
  for (;;) {
    pollfd fds[4] = {{pidfd.get(), POLLIN, 0},
                     {options.cancel_fd, POLLIN, 0},
                     {pipes.out ? pipes.out.get() : -1, POLLIN, 0},
                     {pipes.err ? pipes.err.get() : -1, POLLIN, 0}};
    const int wait_ms = core::poll_timeout(deadline);
    if (wait_ms == 0) {
      ending = Ending::TimedOut;
      break;
    }
    if (::poll(fds, 4, wait_ms) < 0 && errno != EINTR) continue;
    if (fds[2].revents != 0 || fds[3].revents != 0) pipes.pump(*options.output);
    if (fds[1].revents != 0) {
      ending = Ending::Aborted;
      break;
    }
    if (fds[0].revents != 0) break;
  }
  // The program has ended (or is being stopped): nothing of its group outlives the call.
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  guard.done();
  if (options.output != nullptr) pipes.drain(*options.output);
  if (ending == Ending::TimedOut)
    return std::unexpected(sandbox::RunFailure{sandbox::RunFailureKind::TimedOut, ""});
  if (ending == Ending::Aborted)
    return std::unexpected(sandbox::RunFailure{sandbox::RunFailureKind::Aborted, ""});
  if (WIFEXITED(status)) return sandbox::Exited{WEXITSTATUS(status)};
  return sandbox::Signaled{WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL};
}

}  // namespace pisandbox::process
