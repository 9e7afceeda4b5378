#include "serve/worker.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "approval/reviewer_process.hpp"
#include "core/io.hpp"
#include "core/phase_trace.hpp"
#include "core/unique_fd.hpp"
#include "rpc/protocol.hpp"
#include "serve/remote_ledger.hpp"
#include "serve/worker_io.hpp"
#include "session/approval_setup.hpp"
#include "session/session.hpp"

namespace pisandbox::serve {

namespace {

/// Reads the first control line (the exec request). Complete lines read with it (an
/// answer the host sent early) go to `early`, a partial one stays in `control`: both are for
/// HostPrompt's reader.
std::optional<rpc::Exec> read_exec(rpc::LineSplitter& control, std::vector<std::string>& early) {
  char buffer[65536];
  std::vector<std::string> lines = std::move(early);
  early.clear();
  while (lines.empty()) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (!control.feed(std::string_view(buffer, static_cast<std::size_t>(n)), lines))
      return std::nullopt;
  }
  early.assign(std::make_move_iterator(lines.begin() + 1), std::make_move_iterator(lines.end()));
  auto request = rpc::parse_request(lines.front());
  if (!request) return std::nullopt;
  if (auto* exec = std::get_if<rpc::Exec>(&*request)) return std::move(*exec);
  return std::nullopt;
}

/// What to run, from the exec request and serve's options.
session::RunArgs run_args(const rpc::Exec& exec, const WorkerArgs& worker_args) {
  session::RunArgs args;
  args.policy.cwd = exec.cwd;
  args.policy.config = worker_args.config;
  args.policy.binary_at_start = worker_args.binary_at_start;
  args.approval.reviewer = worker_args.reviewer;
  if (exec.command)
    args.shell_command = *exec.command;
  else
    args.argv = exec.argv;
  args.timeout_seconds = exec.timeout_s.value_or(0);
  args.scope_key = exec.scope_key.value_or(exec.id);
  args.agent_name = exec.agent_name;
  args.env_keep = exec.env_keep;
  args.approval_command = exec.approval_command;
  args.subagent = worker_args.subagent;
  return args;
}

/// How the command talks to serve: its output and pi-sandbox's own lines as `output`
/// events, refusals as `denied` events, approvals asked of the host, the session's ledger
/// kept by serve, stdin on fd 3.
session::RunIo run_io(EventPipe& pipe, EventSink& sink, const std::shared_ptr<HostPrompt>& prompt,
                      const std::shared_ptr<RemoteLedger>& ledger, const std::string& id,
                      int cancel_fd) {
  session::RunIo io;
  io.output = &sink;
  io.human = prompt;
  io.ledger = ledger;
  io.cancel_fd = cancel_fd;
  io.stdin_fd = 3;
  io.message = [&sink](const std::string& line) {
    sink.write(sandbox::Stream::Stderr, "pi-sandbox: " + line + "\n");
  };
  io.denied = [&pipe, id](std::string_view surface, const std::string& target,
                          const std::string& reason, std::string_view source,
                          std::string_view recovery) {
    pipe.write(rpc::denied_event(id, surface, target, reason, source, recovery));
  };
  return io;
}

/// The `exit` event's status for `outcome`.
///   timeout_seconds: the command's timeout, for the `timeout` message.
rpc::ExitStatus exit_status(const sandbox::Outcome& outcome, double timeout_seconds) {
  rpc::ExitStatus status;
  if (outcome) {
    if (const auto* exited = std::get_if<sandbox::Exited>(&*outcome))
      status.exit_code = exited->code;
    else
      status.signal = std::get<sandbox::Signaled>(*outcome).signal;
    return status;
  }
  switch (outcome.error().kind) {
    case sandbox::RunFailureKind::TimedOut:
      status.error = "timeout";
      status.message = session::timed_out_message(timeout_seconds);
      break;
    case sandbox::RunFailureKind::Aborted:
      status.error = "aborted";
      break;
    case sandbox::RunFailureKind::LaunchFailed:
    case sandbox::RunFailureKind::Stale:  // execute() runs it again: never seen here
      status.error = "launch_failed";
      status.message = outcome.error().message;
      break;
    case sandbox::RunFailureKind::GuardFailed:
      status.error = "guard_failed";
      status.message = outcome.error().message;
      break;
  }
  return status;
}

/// The request's environment, when it has one, becomes the process environment the session
/// reads (caller_environment()): serve started this process without the loader's variables
/// (server.cpp, worker_start()). Before any thread reads it (the record's thread made ahead
/// waits until the request: session::RecordCheck::begin()).
void take_environment(const rpc::Exec& exec) {
  if (!exec.env) return;
  ::clearenv();
  for (const auto& [name, value] : *exec.env) ::setenv(name.c_str(), value.c_str(), 1);
}

/// Waits until the next control line has come (true) or until the end of stdin or a signal
/// on `cancel_fd` (false): the sandbox kept waiting is not wanted any more.
bool await_exec(const std::vector<std::string>& early, int cancel_fd) {
  if (!early.empty()) return true;
  pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {cancel_fd, POLLIN, 0}};
  while (::poll(fds, 2, -1) < 0)
    if (errno != EINTR) return false;
  return fds[1].revents == 0 && (fds[0].revents & POLLIN) != 0;
}

}  // namespace

int run_worker(const WorkerArgs& worker_args) {
  ::signal(SIGPIPE, SIG_IGN);
  core::phases::enable_from_environment();
  core::UniqueFd cancel = session::cancel_signals();

  rpc::LineSplitter control;
  std::vector<std::string> early;
  std::shared_ptr<session::ReadyAhead> ready;
  if (worker_args.ready) {
    auto ahead = read_exec(control, early);
    if (!ahead) return 2;
    take_environment(*ahead);
    ready = session::prepare_ready(run_args(*ahead, worker_args));
    // The random generator's set-up (its first use in a process) is done while waiting, not
    // when the command's session id is made.
    (void)session::new_id("");
    if (!await_exec(early, cancel.get())) {
      ready.reset();  // pid 1 stopped, its cgroup removed
      std::fflush(nullptr);
      ::_exit(0);
    }
  }
  auto exec = read_exec(control, early);
  if (!exec) return 2;
  core::phases::restart();  // the command's time starts with its request
  // Nothing is loaded from the environment any more.
  take_environment(*exec);
  EventPipe pipe;
  EventSink sink(pipe, exec->id);
  ControlReader reader(control, std::move(early));
  auto prompt = std::make_shared<HostPrompt>(pipe, exec->id, reader);
  auto ledger = std::make_shared<RemoteLedger>(pipe, reader);
  reader.route(
      [&prompt, &ledger](const std::string& line) {
        if (!ledger->take(line)) prompt->take(line);
      },
      [&prompt, &ledger] {
        ledger->close();
        prompt->close();
      });

  const session::RunArgs args = run_args(*exec, worker_args);
  const std::string id = exec->id;
  // `reader`, `prompt`, `ledger`, `control` and `pipe` live until _exit: the reader thread
  // uses them.
  session::RunIo io = run_io(pipe, sink, prompt, ledger, id, cancel.get());
  if (worker_args.no_cgroup_said) {
    io.say_no_cgroup = [] { return false; };
    io.say_home_workspace = [] { return false; };
  }
  io.ready = std::move(ready);
  // The end of the sandbox (pid 1's exit, the proxy, the cgroup) waits until the exit event is
  // written: the host has the result first.
  std::vector<std::shared_ptr<void>> leftovers;
  io.teardown = [&leftovers](std::shared_ptr<void> rest) { leftovers.push_back(std::move(rest)); };
  if (exec->stderr_to_stdout) io.stderr_route = sandbox::StderrRoute::Stdout;
  std::string limit;  // memory wins over pids: it is what ended the command
  io.limit_reached = [&limit](sandbox::Limit reached) {
    // The tmpfs budget is told by its message line alone (the command was not stopped by it).
    if (reached == sandbox::Limit::Tmpfs) return;
    if (limit.empty() || reached == sandbox::Limit::Memory) limit = sandbox::to_string(reached);
  };
  // execute() ends the questions still open (HostPrompt::end()) once the command has ended.
  const sandbox::Outcome outcome = session::execute(args, io);
  sink.flush();
  rpc::ExitStatus status = exit_status(outcome, args.timeout_seconds);
  status.limit = limit;
  pipe.write(rpc::exit_event(id, status));
  core::phases::mark(core::phases::Mark::ExitSent);
  if (std::string phases = core::phases::report(); !phases.empty()) {
    phases += core::phases::clock_line("worker-start", core::phases::trace().start_ns);
    (void)core::write_all(STDERR_FILENO, phases);
  }
  leftovers.clear();
  // Decisions may still be pending on proxy threads (they end with this process): leave
  // without running destructors under them.
  approval::kill_running_reviewers();
  std::fflush(nullptr);
  ::_exit(0);
}

}  // namespace pisandbox::serve
