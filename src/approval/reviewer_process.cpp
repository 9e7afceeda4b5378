#include "approval/reviewer_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <utility>

#include "core/unique_fd.hpp"

namespace pisandbox::approval {

namespace {

using core::UniqueFd;
using SteadyTime = std::chrono::steady_clock;

std::string errno_text(int err) {
  return core::errno_name(err) + " (" + std::strerror(err) + ")";
}

// A started reviewer: its pid (also its process group id), the write end of its stdin, the
// read end of its stdout and a pidfd that becomes readable when it exits.
struct Child {
  pid_t pid = -1;
  UniqueFd stdin_w, stdout_r, pidfd;
};

// Blocks SIGPIPE in this thread while the request is written, so a reviewer that exits
// without reading its stdin gives EPIPE instead of killing pi-sandbox; a SIGPIPE raised
// meanwhile is taken off the thread's pending set before the mask is restored.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      sigset_t pipe_set;
      sigemptyset(&pipe_set);
      sigaddset(&pipe_set, SIGPIPE);
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t old_{};
  bool was_pending_ = false;
};

class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnAttributes() {
    posix_spawnattr_destroy(&attr_);
    posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

std::expected<Child, std::string> spawn(const std::vector<std::string>& argv,
                                        const std::vector<std::string>& env) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return std::unexpected("pipe2: " + errno_text(errno));
  UniqueFd in_r(in[0]), in_w(in[1]);
  if (::pipe2(out, O_CLOEXEC) != 0) return std::unexpected("pipe2: " + errno_text(errno));
  UniqueFd out_r(out[0]), out_w(out[1]);

  SpawnAttributes spawn;
  // The reviewer runs in `/`: a relative argument never names a file the sandboxed command
  // could write (session::check_reviewer_outside() checks them from there).
  posix_spawn_file_actions_addchdir_np(&spawn.actions_, "/");
  posix_spawn_file_actions_adddup2(&spawn.actions_, in_r.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&spawn.actions_, out_w.get(), STDOUT_FILENO);
  // Its own process group, so a timeout kills whatever the reviewer started too; default
  // signal handling and an empty mask whatever pi-sandbox's threads had.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setpgroup(&spawn.attr_, 0);
  posix_spawnattr_setsigmask(&spawn.attr_, &none);
  posix_spawnattr_setsigdefault(&spawn.attr_, &defaults);
  posix_spawnattr_setflags(&spawn.attr_,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  // posix_spawn, never posix_spawnp: a PATH search would use pi-sandbox's own PATH, not `env`.
  const int err =
      ::posix_spawn(&pid, args[0], &spawn.actions_, &spawn.attr_, args.data(), envp.data());
  if (err != 0)
    return std::unexpected("reviewer " + argv[0] + " could not be started: " + errno_text(err));
  Child child;
  child.pid = pid;
  child.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!child.pidfd) {
    const int open_err = errno;
    ::kill(-pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return std::unexpected("pidfd_open: " + errno_text(open_err));
  }
  child.stdin_w = std::move(in_w);
  child.stdout_r = std::move(out_r);
  ::fcntl(child.stdin_w.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(child.stdout_r.get(), F_SETFL, O_NONBLOCK);
  return child;
}

std::string seconds_text(std::chrono::seconds timeout) {
  const auto n = timeout.count();
  return std::to_string(n) + (n == 1 ? " second" : " seconds");
}

// Feeds `input` to the child and collects its stdout until the child has exited and the
// pipe is closed, or the deadline passes. The child is killed (with its group) on any
// error, and always once it has exited, so that no grandchild keeps stdout open.
std::expected<std::string, std::string> exchange(Child& child, std::string_view input,
                                                 SteadyTime::time_point deadline,
                                                 std::chrono::seconds timeout) {
  SigpipeBlock block_sigpipe;
  std::string output;
  std::size_t written = 0;
  bool exited = false;
  if (input.empty()) child.stdin_w.reset();
  while (child.stdout_r || !exited) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyTime::now());
    if (left.count() <= 0)
      return std::unexpected("reviewer did not answer within " + seconds_text(timeout));
    pollfd fds[3] = {{child.stdin_w.get(), POLLOUT, 0},
                     {child.stdout_r.get(), POLLIN, 0},
                     {exited ? -1 : child.pidfd.get(), POLLIN, 0}};
    const int ready = ::poll(fds, 3, static_cast<int>(std::min<long long>(left.count(), 60000)));
    if (ready < 0 && errno != EINTR) return std::unexpected("poll: " + errno_text(errno));
    if (ready <= 0) continue;
    if (fds[0].revents != 0) {
      const ssize_t n =
          ::write(child.stdin_w.get(), input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      // EPIPE: the reviewer stopped reading; its answer (or exit status) still decides.
      if (written == input.size() || (n < 0 && errno != EAGAIN && errno != EINTR))
        child.stdin_w.reset();
    }
    if (fds[1].revents != 0) {
      char buffer[8192];
      const ssize_t n = ::read(child.stdout_r.get(), buffer, sizeof buffer);
      if (n > 0) {
        output.append(buffer, static_cast<std::size_t>(n));
        if (output.size() > kMaxReviewerOutputBytes)
          return std::unexpected("reviewer output is larger than " +
                                 std::to_string(kMaxReviewerOutputBytes) + " bytes");
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        child.stdout_r.reset();
      }
    }
    if (fds[2].revents != 0) {
      exited = true;
      child.stdin_w.reset();
      ::kill(-child.pid, SIGKILL);  // the leader is a zombie: its group id is still ours
    }
  }
  return output;
}

std::expected<void, std::string> exit_status(int status) {
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == 0) return {};
    return std::unexpected("reviewer exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* abbrev = ::sigabbrev_np(sig);
    return std::unexpected("reviewer was killed by signal " + std::to_string(sig) +
                           (abbrev != nullptr ? " (SIG" + std::string(abbrev) + ")" : ""));
  }
  return std::unexpected("reviewer ended with wait status " + std::to_string(status));
}

/// The process groups of the reviewers running now, for kill_running_reviewers().
struct Running {
  std::mutex mutex;
  std::set<pid_t> groups;
};
Running& running() {
  static Running* instance = new Running;  // never destroyed: used until _exit
  return *instance;
}

/// Keeps a reviewer's group in running() while it is alive.
class RunningGroup {
 public:
  explicit RunningGroup(pid_t group) : group_(group) {
    std::lock_guard lock(running().mutex);
    running().groups.insert(group_);
  }
  ~RunningGroup() {
    std::lock_guard lock(running().mutex);
    running().groups.erase(group_);
  }
  RunningGroup(const RunningGroup&) = delete;
  RunningGroup& operator=(const RunningGroup&) = delete;

 private:
  pid_t group_;
};

}  // namespace

void kill_running_reviewers() {
  std::lock_guard lock(running().mutex);
  for (pid_t group : running().groups) ::kill(-group, SIGKILL);
}

ReviewerProcess::ReviewerProcess(std::vector<std::string> argv, std::chrono::seconds timeout,
                                 std::vector<std::string> env)
    : argv_(std::move(argv)), timeout_(timeout), env_(std::move(env)) {}

std::expected<ReviewerVerdict, std::string> ReviewerProcess::review(
    const BoundaryRequest& request, const ReviewEvidence& evidence) {
  if (argv_.empty() || argv_[0].empty()) return std::unexpected("no reviewer program is set");
  nlohmann::json sent = to_json(request);
  if (evidence.user_retry) sent["userRetry"] = true;
  const std::string input =
      sent.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const auto deadline = SteadyTime::now() + timeout_;
  auto child = spawn(argv_, env_);
  if (!child) return std::unexpected(child.error());
  const RunningGroup registered(child->pid);
  auto output = exchange(*child, input, deadline, timeout_);
  if (!output) ::kill(-child->pid, SIGKILL);
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!output) return std::unexpected(output.error());
  if (auto exited = exit_status(status); !exited) return std::unexpected(exited.error());
  auto verdict = parse_reviewer_output(*output);
  if (!verdict) return std::unexpected(verdict.error().message);
  return *verdict;
}

}  // namespace pisandbox::approval
