#include "serve/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
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
#include "core/phase_trace.hpp"
#include "core/unique_fd.hpp"
#include "hostipc/host_ipc.hpp"
#include "policy/host_environment.hpp"
#include "rpc/protocol.hpp"
#include "serve/host_output.hpp"
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
  std::string input_pending;    ///< stdin bytes not yet written to the command
  std::string control_pending;  ///< control lines not yet written to the worker
  bool close_input = false;
  rpc::LineSplitter lines;
  bool exit_seen = false;
  bool reaped = false;
  int status = 0;
};

/// The flags of a descriptor, put back when serve returns.
class RestoredFlags {
 public:
  RestoredFlags(SysCalls& sys, int fd, int flags) : sys_(sys), fd_(fd), flags_(flags) {}
  RestoredFlags(const RestoredFlags&) = delete;
  RestoredFlags& operator=(const RestoredFlags&) = delete;
  ~RestoredFlags() { (void)sys_.fcntl(fd_, F_SETFL, flags_); }

 private:
  SysCalls& sys_;
  int fd_;
  int flags_;
};

class Server {
 public:
  Server(ServeArgs args, const ServeIo& io)
      : args_(std::move(args)),
        sys_(io.sys != nullptr ? *io.sys : os_sys_calls()),
        requests_fd_(io.requests),
        events_fd_(io.events),
        ready_ahead_(io.ready_ahead),
        out_(sys_, io.events) {
    // The binary as it is now: an upgrade may move it aside later (session::PolicyArgs).
    if (auto self = session::own_executable(); self) binary_at_start_ = self->string();
    const char* trace = std::getenv("PI_SANDBOX_TRACE_PHASES");
    trace_ = trace != nullptr && std::strcmp(trace, "1") == 0;
  }

  int run() {
    ::signal(SIGPIPE, SIG_IGN);
    signals_ = session::cancel_signals();
    if (!signals_) return fatal(std::string("signalfd(): ") + std::strerror(errno));
    const int flags = sys_.fcntl(events_fd_, F_GETFL, 0);
    if (flags < 0 || sys_.fcntl(events_fd_, F_SETFL, flags | O_NONBLOCK) != 0)
      return fatal(std::string("fcntl(stdout, O_NONBLOCK): ") + std::strerror(errno));
    const RestoredFlags restore(sys_, events_fd_, flags);
    subagent_ = hostipc::is_subagent(session::caller_environment());
    while (!done()) {
      std::vector<pollfd> fds = poll_set();
      // After the grace the workers are killed once, then waited for: never a zero timeout
      // again, which would spin while a killed worker's pidfd becomes readable.
      const int timeout = stopping_ && !killed_ ? core::poll_timeout(kill_at_) : -1;
      if (sys_.poll(fds.data(), fds.size(), timeout) < 0) {
        if (errno == EINTR) continue;
        return fatal(std::string("poll(): ") + std::strerror(errno));
      }
      dispatch(fds);
    }
    return 0;
  }

 private:
  using Clock = std::chrono::steady_clock;

  static bool finished(const Worker& w) { return w.reaped && !w.events; }

  /// Every worker has ended and every event is written, or the host is gone, or serve was
  /// signalled and the host did not read what was left within the grace.
  [[nodiscard]] bool done() const {
    if (!stopping_ || !workers_.empty()) return false;
    return !out_.waiting() || (signalled_ && killed_);
  }

  /// Whether the workers' events are read now: not while the host has a full queue to read
  /// (HostOutput::kEventsBound), unless the workers were killed (their pipes hold what is
  /// left of them, 64 KiB each at most: pipe(7)).
  [[nodiscard]] bool reading_events() const {
    return out_.queued() < HostOutput::kEventsBound || killed_;
  }

  /// The descriptors to wait for: requests, signals, the host's stdout, then four for each
  /// worker (its events, its pidfd, its command's stdin, its control pipe).
  std::vector<pollfd> poll_set() const {
    std::vector<pollfd> fds;
    const bool requests = stdin_open_ && !stopping_ && out_.queued() < HostOutput::kRequestsBound;
    fds.push_back({requests ? requests_fd_ : -1, POLLIN, 0});
    fds.push_back({signals_.get(), POLLIN, 0});
    fds.push_back({out_.waiting() ? events_fd_ : -1, POLLOUT, 0});
    for (const auto& w : workers_) {
      fds.push_back({w.events && reading_events() ? w.events.get() : -1, POLLIN, 0});
      fds.push_back({w.reaped ? -1 : w.pidfd.get(), POLLIN, 0});
      fds.push_back({w.input && !w.input_pending.empty() ? w.input.get() : -1, POLLOUT, 0});
      fds.push_back({w.control && !w.control_pending.empty() ? w.control.get() : -1, POLLOUT, 0});
    }
    return fds;
  }

  /// Handles what poll(2) reported in `fds` (poll_set()'s layout), then writes what it queued.
  void dispatch(const std::vector<pollfd>& fds) {
    if (stopping_ && !killed_ && Clock::now() >= kill_at_) kill_all(SIGKILL);
    if (fds[1].revents != 0) take_signals();
    // The workers first: handling requests may start new ones, which have no pollfd yet.
    std::size_t i = 3;
    for (auto& w : workers_) {
      if (i >= fds.size()) break;
      if (fds[i].revents != 0) read_events(w);
      if (fds[i + 1].revents != 0) reap(w);
      if (fds[i + 2].revents != 0) write_input(w);
      if (fds[i + 3].revents != 0) write_control(w);
      i += 4;
    }
    std::erase_if(workers_, [](const Worker& w) { return finished(w); });
    if (fds[0].revents != 0) read_requests();
    out_.flush();
  }

  void take_signals() {
    signalfd_siginfo info{};
    while (sys_.read(signals_.get(), &info, sizeof info) == sizeof info) {
    }
    signalled_ = true;
    stop_all();
  }

  /// With PI_SANDBOX_TRACE_PHASES=1, `pi-sandbox: phase-clock <name> <ns>` on stderr
  /// (core::phases::clock_line()): when serve read an exec and when it passed its exit on.
  void trace_clock(std::string_view name) {
    if (trace_)
      (void)write_all(sys_, STDERR_FILENO,
                      "pi-sandbox: phase-clock " + std::string(name) + " " +
                          std::to_string(core::phases::now_ns()) + "\n");
  }

  /// Queues `line` for the host (HostOutput); a host that has gone away loses it.
  void emit(const std::string& line) { out_.push(line); }

  /// serve cannot go on: says why on stderr, kills and reaps every worker; the exit status 1.
  int fatal(const std::string& why) {
    (void)write_all(sys_, STDERR_FILENO, "pi-sandbox serve: " + why + "\n");
    kill_all(SIGKILL);
    for (auto& w : workers_)
      if (!w.reaped) reap(w);
    out_.flush();
    return 1;
  }

  /// Sends `signal` to every worker not yet reaped; SIGKILL is sent once.
  void kill_all(int signal) {
    if (signal == SIGKILL) killed_ = true;
    for (auto& w : workers_)
      if (!w.reaped) (void)sys_.kill(w.pid, signal);
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
    const ssize_t n = sys_.read(requests_fd_, buffer, sizeof buffer);
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
  void take(const rpc::RecentDenials&, const std::string&) {
    std::vector<rpc::DenialEntry> entries;
    for (const auto& d : book_.ledger().recent_denials())
      entries.push_back({d.request_hash, std::string(approval::to_string(d.recovery)), d.surface,
                         d.target, d.reason, d.command});
    emit(rpc::recent_denials_event(entries));
  }
  void take(const rpc::Override& request, const std::string&) {
    const auto kind = approval::recovery_from_string(request.kind);
    auto authorised =
        book_.ledger().authorise(request.request_hash, *kind, request.scope_key.value_or(""));
    if (!authorised) {
      emit(rpc::error_event("override: " + authorised.error()));
      return;
    }
    emit(rpc::override_event(request.request_hash, request.kind, approval::kOverrideTtl.count()));
  }
  void take(const rpc::Abort& abort, const std::string&) {
    if (Worker* w = find(abort.id))
      (void)sys_.kill(w->pid, SIGTERM);  // only ESRCH is possible: the pidfd reports its end
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
    send_control(*w, line + "\n");
    book_.answered(w->id, response.request_id);  // answered (or unknown: the worker says so)
  }
  void take(rpc::Exec& exec, const std::string&) {
    trace_clock("serve-request");
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
  bool open_pipe(UniqueFd& read_end, UniqueFd& write_end) {
    int ends[2];
    if (sys_.pipe2(ends, O_CLOEXEC) != 0) return false;
    read_end.reset(ends[0]);
    write_end.reset(ends[1]);
    return true;
  }

  /// The pipes for `exec`, or the `pipe2(): <errno>` or `open("/dev/null"): <errno>` message
  /// (EMFILE when serve is out of descriptors). Pipes opened before a failure are closed.
  core::Result<WorkerPipes> open_pipes(const rpc::Exec& exec) {
    WorkerPipes pipes;
    if (!open_pipe(pipes.control_read, pipes.control_write) ||
        !open_pipe(pipes.events_read, pipes.events_write) ||
        (exec.stdin_pipe && !open_pipe(pipes.input_read, pipes.input_write)))
      return core::fail(std::string("pipe2(): ") + std::strerror(errno));
    if (!exec.stdin_pipe) {
      pipes.null_input.reset(sys_.open("/dev/null", O_RDONLY | O_CLOEXEC));
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
    // Only the session's first command may say that commands get no cgroup.
    if (workers_started_ > 0) argv.push_back("--no-cgroup-said");
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
  /// or the `fork(): <errno>` message. Out of descriptors the worker ends at once with 127
  /// (SysCalls::spawn()); serve reports that it ended without a result.
  core::Result<pid_t> spawn_worker(std::vector<std::string> argv, std::vector<std::string> env,
                                   const int (&fds)[4]) {
    std::vector<char*> c_argv, c_env;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (auto& e : env) c_env.push_back(e.data());
    c_env.push_back(nullptr);
    const pid_t pid = sys_.spawn(c_argv.data(), c_env.data(), fds);
    if (pid < 0) return core::fail(std::string("fork(): ") + std::strerror(errno));
    return pid;
  }

  /// Ends the command `id` that could not start with `exit {error: "launch_failed"}`
  /// (docs/protocol.md); `why` names the call and its errno.
  void launch_failed(const std::string& id, const std::string& why) {
    emit(rpc::exit_event(id, {std::nullopt, std::nullopt, "launch_failed", why}));
  }

  /// Kills and reaps a worker serve cannot watch (no pidfd), so none is left unreaped.
  void discard_worker(pid_t pid) {
    (void)sys_.kill(pid, SIGKILL);
    (void)wait_for(sys_, pid, nullptr);
  }

  /// Starts the command of `exec` in the worker kept waiting for its key, else in a new one;
  /// the next sandbox for that key is made once the command has ended (read_events()), so that
  /// making it takes no CPU from the command.
  void start(const rpc::Exec& exec) {
    if (!take_ready(exec, ready_key(exec))) start_fresh(exec);
    if (Worker* w = find(exec.id); w != nullptr && ready_ahead_) w->ahead = exec;
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
    emit(rpc::started_event(exec.id));
    send_control(w, rpc::exec_line(line));
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
    w.pidfd.reset(sys_.pidfd_open(*pid));
    w.events = std::move(pipes->events_read);
    w.control = std::move(pipes->control_write);
    if (exec.stdin_pipe) w.input = std::move(pipes->input_write);
    if (!w.pidfd || !make_nonblocking(w)) {
      discard_worker(*pid);
      return;
    }
    line.id = "ready";
    workers_.push_back(std::move(w));
    send_control(workers_.back(), rpc::exec_line(line));
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
    ++workers_started_;
    Worker w;
    w.id = exec.id;
    w.pid = *pid;
    w.pidfd.reset(sys_.pidfd_open(*pid));
    if (!w.pidfd) {
      const std::string why = std::string("pidfd_open(): ") + std::strerror(errno);
      discard_worker(*pid);
      return launch_failed(exec.id, why);
    }
    w.events = std::move(pipes->events_read);
    w.control = std::move(pipes->control_write);
    if (exec.stdin_pipe) w.input = std::move(pipes->input_write);
    if (!make_nonblocking(w)) {
      const std::string why = std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno);
      discard_worker(*pid);
      return launch_failed(exec.id, why);
    }
    emit(rpc::started_event(exec.id));
    workers_.push_back(std::move(w));
    send_control(workers_.back(), rpc::exec_line(line));
  }

  /// serve's ends of the pipes of `w`, non-blocking: a worker or a command that does not read
  /// must not stop serve. False with errno set when fcntl(2) fails.
  bool make_nonblocking(const Worker& w) {
    for (const UniqueFd* fd : {&w.events, &w.control, &w.input})
      if (*fd && sys_.fcntl(fd->get(), F_SETFL, O_NONBLOCK) != 0) return false;
    return true;
  }

  /// Queues `line` for the control pipe of `w` and writes what the pipe takes now. A worker
  /// that has ended cannot take it (EPIPE) and ends without a result: its pidfd says so.
  void send_control(Worker& w, const std::string& line) {
    if (!w.control) return;
    w.control_pending += line;
    write_control(w);
  }

  /// Writes the pending control lines of `w` until done or the pipe is full (EAGAIN: serve
  /// waits for POLLOUT).
  void write_control(Worker& w) {
    while (w.control && !w.control_pending.empty()) {
      const ssize_t n =
          sys_.write(w.control.get(), w.control_pending.data(), w.control_pending.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {  // the worker has ended
        w.control.reset();
        w.control_pending.clear();
        return;
      }
      w.control_pending.erase(0, static_cast<std::size_t>(n));
    }
  }

  /// Reads and forwards the events of `w`: up to 16 reads, fewer once the host's queue is
  /// full (reading_events()), so that one busy worker cannot hold the loop.
  void read_events(Worker& w) {
    char buffer[65536];
    for (int round = 0; round < 16 && reading_events(); ++round) {
      const ssize_t n = sys_.read(w.events.get(), buffer, sizeof buffer);
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
        // A worker still waiting with its sandbox made ahead has no command: nothing it writes
        // is the host's business.
        if (!w.ready_key.empty()) continue;
        if (is_ledger_request(line)) {
          book_.answer(w.id, line);  // serve's own business: never forwarded
          continue;
        }
        // Forwarded first: a question the book settles at once reaches the host before that.
        const bool asks = line.starts_with(R"({"type":"approval_request")");
        if (line.starts_with(R"({"type":"approval_settled")")) book_.settled(w.id, line);
        const bool exit = line.starts_with(R"({"type":"exit")");
        if (exit) {
          settle_open(w);
          w.exit_seen = true;
        }
        emit(line + "\n");
        if (asks) book_.opened(w.id, line);
        if (!exit) continue;
        // The exit reaches the host first; the next sandbox is made after it.
        out_.flush();
        trace_clock("serve-exit");
        if (w.ahead && !stopping_) make_ready(*w.ahead, ready_key(*w.ahead));
        w.ahead.reset();
      }
    }
  }

  void reap(Worker& w) {
    const pid_t got = wait_for(sys_, w.pid, &w.status);
    if (got < 0) w.status = 127 << 8;  // ECHILD: not serve's child any more; no status to report
    w.reaped = true;
    w.input.reset();
    w.control.reset();
    w.control_pending.clear();
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
      const ssize_t n = sys_.write(w.input.get(), w.input_pending.data(), w.input_pending.size());
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
  SysCalls& sys_;
  int requests_fd_;
  int events_fd_;
  bool ready_ahead_;  ///< ServeIo::ready_ahead
  HostOutput out_;
  std::string binary_at_start_;
  /// The session's ledger and open questions, for every command (docs/protocol.md, "Answers,
  /// sources and reasons").
  SessionBook book_{[this](const std::string& id, const std::string& line) {
    if (Worker* w = find(id)) send_control(*w, line);
  }};
  UniqueFd signals_;
  rpc::LineSplitter requests_;
  std::list<Worker> workers_;
  bool stdin_open_ = true;
  bool stopping_ = false;
  bool subagent_ = false;
  bool trace_ = false;               ///< PI_SANDBOX_TRACE_PHASES=1: trace_clock() prints
  std::size_t workers_started_ = 0;  ///< the session's commands so far (for --no-cgroup-said)
  bool killed_ = false;              ///< the grace of shutdown has passed and SIGKILL was sent
  bool signalled_ = false;           ///< SIGINT, SIGTERM or SIGHUP arrived
  Clock::time_point kill_at_{};
};

}  // namespace

int serve(const ServeArgs& args, const ServeIo& io) {
  return Server(args, io).run();
}

}  // namespace pisandbox::serve
