#include "serve/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/deadline.hpp"
#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "hostipc/host_ipc.hpp"
#include "policy/host_environment.hpp"
#include "rpc/protocol.hpp"
#include "serve/ledger_lines.hpp"
#include "serve/session_book.hpp"
#include "serve/worker.hpp"
#include "session/policy_setup.hpp"
#include "session/session.hpp"

namespace pisandbox::serve {

namespace {

using core::UniqueFd;

constexpr const char* kServer = "pi-sandbox " PI_SANDBOX_VERSION;
// The sandbox that runs the commands, as hello names it (docs/protocol.md): the one the session
// chooses for this platform (session/session.cpp): Seatbelt on Apple (docs/macos.md), else Linux.
#if defined(__APPLE__)
constexpr const char* kSandbox = "macos";
#else
constexpr const char* kSandbox = "linux";
#endif
/// How many workers serve keeps waiting with a sandbox made ahead, at most: one per workspace
/// and policy, the one made longest ago going first (docs/ARCHITECTURE.md, "A sandbox made
/// ahead"). Each holds two processes, a cgroup and the namespaces of one sandbox.
constexpr std::size_t kMaxReady = 4;
/// How long workers get to clean up after SIGTERM before SIGKILL, at shutdown.
constexpr auto kShutdownGrace = std::chrono::seconds(10);

/// Writes a whole line to stdout (the host). A host that has gone away loses it.
void emit(const std::string& line) {
  (void)core::write_all(STDOUT_FILENO, line);
}

struct Worker {
  std::string id;
  /// A worker kept waiting with a sandbox made for the requests of this key (ready_key());
  /// empty for a worker that has its exec.
  std::string ready_key;
  /// The request to make the next sandbox for once this worker's command has ended
  /// (make_ready()).
  std::optional<rpc::Exec> ahead;
  pid_t pid = -1;
  UniqueFd pidfd, events, control, input;
  std::string input_pending;  ///< stdin bytes not yet written to the command
  bool close_input = false;
  rpc::LineSplitter lines;
  bool exit_seen = false;
  bool reaped = false;
  int status = 0;
};

class Server {
 public:
  explicit Server(ServeArgs args) : args_(std::move(args)) {
    // The binary as it is now: an upgrade may move it aside later (session::PolicyArgs).
    if (auto self = session::own_executable(); self) binary_at_start_ = self->string();
  }

  int run() {
    ::signal(SIGPIPE, SIG_IGN);
    signals_ = session::cancel_signals();
    if (!signals_) return fatal(std::string("signalfd(): ") + std::strerror(errno));
    subagent_ = hostipc::is_subagent(session::caller_environment());
    while (!(stopping_ && workers_.empty())) {
      std::vector<pollfd> fds;
      fds.push_back({stdin_open_ && !stopping_ ? STDIN_FILENO : -1, POLLIN, 0});
      fds.push_back({signals_.get(), POLLIN, 0});
      for (auto& w : workers_) {
        fds.push_back({w.events ? w.events.get() : -1, POLLIN, 0});
        fds.push_back({w.reaped ? -1 : w.pidfd.get(), POLLIN, 0});
        fds.push_back({w.input && !w.input_pending.empty() ? w.input.get() : -1, POLLOUT, 0});
      }
      // After the grace the workers are killed once, then waited for: never a zero timeout
      // again, which would spin while a killed worker's pidfd becomes readable.
      const int timeout = stopping_ && !killed_ ? core::poll_timeout(kill_at_) : -1;
      if (::poll(fds.data(), fds.size(), timeout) < 0) {
        if (errno == EINTR) continue;
        return fatal(std::string("poll(): ") + std::strerror(errno));
      }
      if (stopping_ && !killed_ && Clock::now() >= kill_at_) kill_all(SIGKILL);
      if (fds[1].revents != 0) {
        signalfd_siginfo info{};
        while (::read(signals_.get(), &info, sizeof info) == sizeof info) {
        }
        stop_all();
      }
      // The workers first: handling requests may start new ones, which have no pollfd yet.
      std::size_t i = 2;
      for (auto& w : workers_) {
        if (i >= fds.size()) break;
        if (fds[i].revents != 0) read_events(w);
        if (fds[i + 1].revents != 0) reap(w);
        if (fds[i + 2].revents != 0) write_input(w);
        i += 3;
      }
      std::erase_if(workers_, [](const Worker& w) { return finished(w); });
      if (fds[0].revents != 0) read_requests();
    }
    return 0;
  }

 private:
  using Clock = std::chrono::steady_clock;

  static bool finished(const Worker& w) { return w.reaped && !w.events; }

  /// serve cannot go on: says why on stderr, kills and reaps every worker; the exit status 1.
  int fatal(const std::string& why) {
    (void)core::write_all(STDERR_FILENO, "pi-sandbox serve: " + why + "\n");
    kill_all(SIGKILL);
    for (auto& w : workers_)
      if (!w.reaped) reap(w);
    return 1;
  }

  /// Sends `signal` to every worker not yet reaped; SIGKILL is sent once.
  void kill_all(int signal) {
    if (signal == SIGKILL) killed_ = true;
    for (auto& w : workers_)
      if (!w.reaped) (void)::kill(w.pid, signal);
  }

  void stop_all() {
    if (!stopping_) {
      stopping_ = true;
      kill_at_ = Clock::now() + kShutdownGrace;
    }
    kill_all(SIGTERM);
  }

  Worker* find(const std::string& id) {
    for (auto& w : workers_)
      if (w.ready_key.empty() && w.id == id && !w.reaped) return &w;
    return nullptr;
  }

  void read_requests() {
    char buffer[65536];
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n <= 0) {
      // End of stdin: the host is gone. Nothing may outlive it.
      stdin_open_ = false;
      std::string rest = requests_.take_rest();
      if (!rest.empty()) handle(rest);
      stop_all();
      return;
    }
    std::vector<std::string> lines;
    if (!requests_.feed(std::string_view(buffer, static_cast<std::size_t>(n)), lines))
      emit(rpc::error_event("line longer than " + std::to_string(rpc::kMaxLineBytes) + " bytes"));
    for (const auto& line : lines) handle(line);
  }

  void handle(const std::string& line) {
    if (line.empty()) return;
    auto request = rpc::parse_request(line);
    if (!request) {
      emit(rpc::error_event(request.error().message, request.error().id));
      return;
    }
    std::visit([&](auto& r) { take(r, line); }, *request);
  }

  void take(const rpc::Hello& hello, const std::string&) {
    if (hello.version != rpc::kProtocolVersion) {
      emit(rpc::error_event("unsupported protocol version " + std::to_string(hello.version) +
                            " (this server speaks 1)"));
      return;
    }
    emit(rpc::hello_event(kServer, kSandbox));
  }
  void take(const rpc::Shutdown&, const std::string&) { stop_all(); }
  void take(const rpc::Abort& abort, const std::string&) {
    if (Worker* w = find(abort.id))
      (void)::kill(w->pid, SIGTERM);  // only ESRCH is possible: the pidfd reports its end
    else
      emit(rpc::error_event("unknown command id \"" + abort.id + "\"", abort.id));
  }
  void take(const rpc::StdinData& data, const std::string&) {
    Worker* w = find(data.id);
    if (w == nullptr || !w->input || w->close_input) {
      emit(rpc::error_event(w == nullptr ? "unknown command id \"" + data.id + "\""
                                         : "command \"" + data.id + "\" has no open stdin",
                            data.id));
      return;
    }
    w->input_pending += data.data;
    write_input(*w);
  }
  void take(const rpc::StdinClose& close, const std::string&) {
    Worker* w = find(close.id);
    if (w == nullptr) {
      emit(rpc::error_event("unknown command id \"" + close.id + "\"", close.id));
      return;
    }
    w->close_input = true;
    if (w->input_pending.empty()) w->input.reset();
  }
  void take(const rpc::ApprovalResponse& response, const std::string& line) {
    Worker* w = find(response.id);
    if (w == nullptr) {
      emit(rpc::error_event("unknown command id \"" + response.id + "\"", response.id));
      return;
    }
    // A worker that has ended cannot take it; its pidfd reports the end.
    (void)core::write_all(w->control.get(), line + "\n");
    book_.answered(w->id, response.request_id);  // answered (or unknown: the worker says so)
  }
  void take(rpc::Exec& exec, const std::string&) {
    if (stopping_) {
      emit(rpc::error_event("exec \"" + exec.id + "\": the server is shutting down", exec.id));
      return;
    }
    if (find(exec.id) != nullptr) {
      emit(rpc::error_event("exec \"" + exec.id + "\": an id that is already running", exec.id));
      return;
    }
    start(exec);
  }

  /// serve's ends and the worker's ends of the pipes of one command.
  struct WorkerPipes {
    UniqueFd control_read, control_write;  ///< requests for the worker: exec, answers
    UniqueFd events_read, events_write;    ///< the worker's events
    UniqueFd input_read, input_write;      ///< the command's stdin, with `stdin: "pipe"`
    UniqueFd null_input;                   ///< the command's stdin otherwise
  };

  /// One pipe into `read_end` and `write_end`; false with errno set when pipe2(2) fails.
  static bool open_pipe(UniqueFd& read_end, UniqueFd& write_end) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return false;
    read_end.reset(ends[0]);
    write_end.reset(ends[1]);
    return true;
  }

  /// The pipes for `exec`, or the `pipe2(): <errno>` or `open("/dev/null"): <errno>` message
  /// (EMFILE when serve is out of descriptors). Pipes opened before a failure are closed.
  static core::Result<WorkerPipes> open_pipes(const rpc::Exec& exec) {
    WorkerPipes pipes;
    if (!open_pipe(pipes.control_read, pipes.control_write) ||
        !open_pipe(pipes.events_read, pipes.events_write) ||
        (exec.stdin_pipe && !open_pipe(pipes.input_read, pipes.input_write)))
      return core::fail(std::string("pipe2(): ") + std::strerror(errno));
    if (!exec.stdin_pipe) {
      pipes.null_input.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
      if (!pipes.null_input)
        return core::fail(std::string("open(\"/dev/null\"): ") + std::strerror(errno));
    }
    return pipes;
  }

  /// `pi-sandbox serve-worker` with serve's own options.
  [[nodiscard]] std::vector<std::string> worker_argv() const {
    std::vector<std::string> argv = {"/proc/self/exe", "serve-worker"};
    if (!args_.config.empty()) argv.insert(argv.end(), {"--config", args_.config});
    if (!args_.reviewer.empty()) argv.insert(argv.end(), {"--reviewer", args_.reviewer});
    if (subagent_) argv.push_back("--subagent");
    if (!binary_at_start_.empty()) argv.insert(argv.end(), {"--binary-at-start", binary_at_start_});
    return argv;
  }

  /// The request's `env` when it has one, else serve's own environment.
  static std::vector<std::string> command_environment(const rpc::Exec& exec) {
    if (!exec.env) return session::caller_environment();
    std::vector<std::string> env;
    for (const auto& [name, value] : *exec.env) env.push_back(name + "=" + value);
    return env;
  }

  /// The exec request as the worker reads it, and the worker's own process environment: the
  /// command's environment less what the dynamic loader would load into the worker, which
  /// runs on the host until it sandboxes (docs/security.md, "What pi-sandbox starts on the
  /// host"). When that takes something out of serve's own environment, the request carries the
  /// whole environment instead, so the command inside still gets it (run_worker() restores it).
  static std::pair<rpc::Exec, std::vector<std::string>> worker_start(const rpc::Exec& exec) {
    const std::vector<std::string> command_env = command_environment(exec);
    std::vector<std::string> worker_env = policy::loader_free_environment(command_env);
    rpc::Exec line = exec;
    if (!line.env && worker_env.size() != command_env.size()) {
      line.env.emplace();
      for (const auto& entry : command_env) {
        const auto equals = entry.find('=');
        if (equals != std::string::npos)
          line.env->emplace(entry.substr(0, equals), entry.substr(equals + 1));
      }
    }
    return {std::move(line), std::move(worker_env)};
  }

  /// Forks and execs the worker with `fds` as its stdin, stdout, stderr and fd 3; the pid,
  /// or the `fork(): <errno>` message.
  static core::Result<pid_t> spawn_worker(std::vector<std::string> argv,
                                          std::vector<std::string> env, const int (&fds)[4]) {
    std::vector<char*> c_argv, c_env;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (auto& e : env) c_env.push_back(e.data());
    c_env.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return core::fail(std::string("fork(): ") + std::strerror(errno));
    if (pid > 0) return pid;
    // The worker dies with serve (and its sandbox with it: pid 1's own parent-death
    // signal). Only async-signal-safe calls until execve.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);
    // Out of descriptors the worker ends at once with 127; serve reports that it ended
    // without a result.
    int moved[4];
    for (int i = 0; i < 4; ++i)
      if ((moved[i] = ::fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0) ::_exit(127);
    for (int i = 0; i < 4; ++i)
      if (::dup2(moved[i], i) < 0) ::_exit(127);
    ::syscall(SYS_close_range, 4U, ~0U, 0U);  // nothing else of serve's reaches a worker
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve("/proc/self/exe", c_argv.data(), c_env.data());
    ::_exit(127);
  }

  /// Ends the command `id` that could not start with `exit {error: "launch_failed"}`
  /// (docs/protocol.md); `why` names the call and its errno.
  static void launch_failed(const std::string& id, const std::string& why) {
    emit(rpc::exit_event(id, {std::nullopt, std::nullopt, "launch_failed", why}));
  }

  /// Kills and reaps a worker serve cannot watch (no pidfd), so none is left unreaped.
  static void discard_worker(pid_t pid) {
    (void)::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }

  /// Starts the command of `exec` in the worker kept waiting for its key, else in a new one;
  /// the next sandbox for that key is made once the command has ended (read_events()), so that
  /// making it takes no CPU from the command.
  void start(const rpc::Exec& exec) {
    if (!take_ready(exec, ready_key(exec))) start_fresh(exec);
    if (Worker* w = find(exec.id)) w->ahead = exec;
  }

  /// What a sandbox made ahead is made for: the workspace, the command's environment (which
  /// the policy reads: the home, the toolchains) and whether stdin is a pipe (the worker's fd 3).
  /// The worker checks the plans again before it uses the sandbox (still_holds()).
  static std::string ready_key(const rpc::Exec& exec) {
    std::string key = exec.cwd + '\0' + (exec.stdin_pipe ? '1' : '0');
    for (const auto& entry : command_environment(exec)) key += '\0' + entry;
    return key;
  }

  /// Hands `exec` to the worker kept waiting for `key`, if any; false otherwise.
  bool take_ready(const rpc::Exec& exec, const std::string& key) {
    auto it = std::ranges::find_if(
        workers_, [&](const Worker& w) { return w.ready_key == key && !w.reaped && w.control; });
    if (it == workers_.end()) return false;
    Worker& w = *it;
    w.ready_key.clear();
    w.id = exec.id;
    w.exit_seen = false;
    auto [line, env] = worker_start(exec);
    (void)core::write_all(w.control.get(), rpc::exec_line(line));
    emit(rpc::started_event(exec.id));
    return true;
  }

  /// Starts a worker kept waiting for the next request like `exec` (WorkerArgs::ready), unless
  /// one waits already; beyond kMaxReady, the one made longest ago is let go (the end of its
  /// stdin: it discards its sandbox and ends). A worker that cannot start is simply not there.
  void make_ready(const rpc::Exec& exec, const std::string& key) {
    std::size_t waiting = 0;
    for (const auto& w : workers_)
      if (!w.ready_key.empty() && !w.reaped && w.control) {
        if (w.ready_key == key) return;
        ++waiting;
      }
    for (auto& w : workers_)
      if (waiting >= kMaxReady && !w.ready_key.empty() && !w.reaped && w.control) {
        w.control.reset();
        --waiting;
      }
    auto pipes = open_pipes(exec);
    if (!pipes) return;
    const int fds[4] = {pipes->control_read.get(), pipes->events_write.get(), STDERR_FILENO,
                        pipes->input_read ? pipes->input_read.get() : pipes->null_input.get()};
    auto [line, worker_env] = worker_start(exec);
    std::vector<std::string> argv = worker_argv();
    argv.push_back("--ready");
    const auto pid = spawn_worker(std::move(argv), std::move(worker_env), fds);
    if (!pid) return;
    Worker w;
    w.ready_key = key;
    w.exit_seen = true;  // nothing to conclude until it has an exec
    w.pid = *pid;
    w.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0)));
    w.events = std::move(pipes->events_read);
    w.control = std::move(pipes->control_write);
    if (exec.stdin_pipe) w.input = std::move(pipes->input_write);
    if (!w.pidfd || ::fcntl(w.events.get(), F_SETFL, O_NONBLOCK) != 0 ||
        (w.input && ::fcntl(w.input.get(), F_SETFL, O_NONBLOCK) != 0)) {
      discard_worker(*pid);
      return;
    }
    line.id = "ready";
    (void)core::write_all(w.control.get(), rpc::exec_line(line));
    workers_.push_back(std::move(w));
  }

  /// Starts the worker of `exec`, hands it the exec line and reports `started` (or the
  /// command's `launch_failed` exit, naming the call that failed: pipe2(2), fork(2),
  /// pidfd_open(2), fcntl(2)).
  void start_fresh(const rpc::Exec& exec) {
    auto pipes = open_pipes(exec);
    if (!pipes) return launch_failed(exec.id, pipes.error().message);
    const int fds[4] = {pipes->control_read.get(), pipes->events_write.get(), STDERR_FILENO,
                        pipes->input_read ? pipes->input_read.get() : pipes->null_input.get()};
    auto [line, worker_env] = worker_start(exec);
    const auto pid = spawn_worker(worker_argv(), std::move(worker_env), fds);
    if (!pid) return launch_failed(exec.id, pid.error().message);
    Worker w;
    w.id = exec.id;
    w.pid = *pid;
    w.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, *pid, 0)));
    if (!w.pidfd) {
      const std::string why = std::string("pidfd_open(): ") + std::strerror(errno);
      discard_worker(*pid);
      return launch_failed(exec.id, why);
    }
    w.events = std::move(pipes->events_read);
    w.control = std::move(pipes->control_write);
    if (exec.stdin_pipe) w.input = std::move(pipes->input_write);
    if (::fcntl(w.events.get(), F_SETFL, O_NONBLOCK) != 0 ||
        (w.input && ::fcntl(w.input.get(), F_SETFL, O_NONBLOCK) != 0)) {
      const std::string why = std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno);
      discard_worker(*pid);
      return launch_failed(exec.id, why);
    }
    // A worker that ends before reading it (EPIPE) ends without a result: its pidfd says so.
    (void)core::write_all(w.control.get(), rpc::exec_line(line));
    emit(rpc::started_event(exec.id));
    workers_.push_back(std::move(w));
  }

  void read_events(Worker& w) {
    char buffer[65536];
    for (int round = 0; round < 16; ++round) {
      const ssize_t n = ::read(w.events.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {
        w.events.reset();
        if (w.reaped) conclude(w);
        return;
      }
      std::vector<std::string> lines;
      w.lines.feed(std::string_view(buffer, static_cast<std::size_t>(n)), lines);
      for (auto& line : lines) {
        if (is_ledger_request(line)) {
          book_.answer(w.id, line);  // serve's own business: never forwarded
          continue;
        }
        // Forwarded first: a question the book settles at once reaches the host before that.
        const bool asks = line.starts_with(R"({"type":"approval_request")");
        if (line.starts_with(R"({"type":"approval_settled")")) book_.settled(w.id, line);
        if (line.starts_with(R"({"type":"exit")")) {
          settle_open(w);
          w.exit_seen = true;
          if (w.ahead && !stopping_) make_ready(*w.ahead, ready_key(*w.ahead));
          w.ahead.reset();
        }
        emit(line + "\n");
        if (asks) book_.opened(w.id, line);
      }
    }
  }

  void reap(Worker& w) {
    pid_t got;
    while ((got = ::waitpid(w.pid, &w.status, 0)) < 0 && errno == EINTR) {
    }
    if (got < 0) w.status = 127 << 8;  // ECHILD: not serve's child any more; no status to report
    w.reaped = true;
    w.input.reset();
    w.control.reset();
    if (!w.events) conclude(w);
  }

  /// The command of `w` has ended: the host closes whatever question of it is still open.
  void settle_open(const Worker& w) {
    for (const auto& request_id : book_.ended(w.id))
      emit(rpc::approval_settled_event(w.id, request_id, rpc::Choice::Deny, "unavailable",
                                       approval::kCommandEndedReason));
  }

  /// A worker that ended without its `exit` event (killed, crashed) still ends its command.
  void conclude(Worker& w) {
    if (w.exit_seen) return;
    settle_open(w);
    w.exit_seen = true;
    if (stopping_) {  // shutdown or the host's end of stdin: the command was stopped
      emit(rpc::exit_event(
          w.id, {std::nullopt, std::nullopt, "aborted", "pi-sandbox serve is shutting down"}));
      return;
    }
    std::string why = WIFSIGNALED(w.status)
                          ? "killed by signal " + std::to_string(WTERMSIG(w.status))
                          : "exit status " + std::to_string(WEXITSTATUS(w.status));
    emit(rpc::exit_event(w.id, {std::nullopt, std::nullopt, "launch_failed",
                                "the command's worker ended without a result (" + why + ")"}));
  }

  void write_input(Worker& w) {
    while (w.input && !w.input_pending.empty()) {
      const ssize_t n = ::write(w.input.get(), w.input_pending.data(), w.input_pending.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {  // the command closed its stdin
        w.input.reset();
        w.input_pending.clear();
        return;
      }
      w.input_pending.erase(0, static_cast<std::size_t>(n));
    }
    if (w.close_input && w.input_pending.empty()) w.input.reset();
  }

  ServeArgs args_;
  std::string binary_at_start_;
  /// The session's ledger and open questions, for every command (issue 13, item 5).
  SessionBook book_{[this](const std::string& id, const std::string& line) {
    if (Worker* w = find(id)) (void)core::write_all(w->control.get(), line);
  }};
  UniqueFd signals_;
  rpc::LineSplitter requests_;
  std::list<Worker> workers_;
  bool stdin_open_ = true;
  bool stopping_ = false;
  bool subagent_ = false;
  bool killed_ = false;  ///< the grace of shutdown has passed and SIGKILL was sent
  Clock::time_point kill_at_{};
};

}  // namespace

int serve(const ServeArgs& args) {
  return Server(args).run();
}

}  // namespace pisandbox::serve
