// `pi-sandbox serve-worker` (internal): one command of `pi-sandbox serve`, in a process of its
// own so that every command is as independent as a separate `run` (issue 7). Its stdin is
// serve's control pipe (first line: the exec request; then approval responses), its stdout
// the event pipe (complete JSON lines, docs/protocol.md), fd 3 the command's stdin.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "approval/reviewer_process.hpp"
#include "approval/terminal_prompt.hpp"
#include "cli/approval_setup.hpp"
#include "cli/execution.hpp"
#include "core/io.hpp"
#include "core/unique_fd.hpp"
#include "rpc/protocol.hpp"

namespace pisandbox::cli {

namespace {

/// Whole-line writes to the event pipe, from any thread.
class EventPipe {
 public:
  void write(const std::string& line) {
    std::lock_guard lock(mutex_);
    // serve gone: the line is lost, and the parent-death signal ends this worker.
    (void)core::write_all(STDOUT_FILENO, line);
  }

 private:
  std::mutex mutex_;
};

/// The command's output as `output` events; a UTF-8 character split across reads is held
/// back until its last byte arrives, so text stays text.
class EventSink final : public sandbox::OutputSink {
 public:
  EventSink(EventPipe& pipe, std::string id) : pipe_(pipe), id_(std::move(id)) {}
  void write(sandbox::Stream stream, std::string_view bytes) override {
    std::lock_guard lock(mutex_);
    std::string& held = held_[stream == sandbox::Stream::Stderr];
    held.append(bytes);
    const std::size_t keep = rpc::incomplete_utf8_tail(held);
    if (held.size() == keep) return;
    const std::string_view ready = std::string_view(held).substr(0, held.size() - keep);
    pipe_.write(rpc::output_event(id_, stream == sandbox::Stream::Stderr, ready));
    held.erase(0, held.size() - keep);
  }
  void flush() {
    std::lock_guard lock(mutex_);
    for (int i = 0; i < 2; ++i)
      if (!held_[i].empty()) pipe_.write(rpc::output_event(id_, i == 1, held_[i]));
  }

 private:
  EventPipe& pipe_;
  std::string id_;
  std::mutex mutex_;
  std::string held_[2];
};

/// The human is the host: each question is an `approval_request` event; the answer comes
/// back as an `approval_response` line on stdin, read by one reader thread.
class HostPrompt final : public approval::HumanPrompt {
 public:
  /// `control`: the control pipe's splitter, past the exec line; `early`: complete lines read
  /// with the exec line, taken first.
  HostPrompt(EventPipe& pipe, std::string id, rpc::LineSplitter& control,
             std::vector<std::string> early)
      : pipe_(pipe), id_(std::move(id)), control_(control), early_(std::move(early)) {}

  approval::HumanAnswer ask(const approval::HumanQuestion& question) override {
    std::unique_lock lock(mutex_);
    if (!reader_started_) {
      // Started at the first question, which comes after the sandbox's clone (the
      // supervisor must be single-threaded at clone time).
      reader_started_ = true;
      std::thread([this] { read_answers(); }).detach();
    }
    // Unguessable and never reused: a stale or early answer can match no other question.
    const std::string request_id = new_id("r-");
    nlohmann::ordered_json event = {{"type", "approval_request"},
                                    {"id", id_},
                                    {"request_id", request_id},
                                    {"request", approval::to_json(question.request)}};
    event["title"] = "Sandbox approval required: " + question.request.operation + " " +
                     approval::approval_target(question.request);
    if (!question.warning.empty()) event["warning"] = question.warning;
    if (!question.reason.empty()) event["reason"] = question.reason;
    nlohmann::ordered_json choices = nlohmann::ordered_json::array();
    choices.push_back({{"choice", "allow-once"}, {"label", "Allow this exact operation once"}});
    if (question.offer_for_command && question.request.destination)
      choices.push_back(
          {{"choice", "allow-command"},
           {"label", "Allow " + *question.request.destination + " for the rest of this command"}});
    choices.push_back({{"choice", "deny"}, {"label", "Deny"}});
    event["choices"] = choices;
    const bool offers_command = question.offer_for_command && question.request.destination;
    pending_[request_id] = offers_command;
    pipe_.write(event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    answered_.wait(lock, [&] { return answers_.contains(request_id) || closed_; });
    pending_.erase(request_id);  // unanswered (stdin closed): later answers are unknown
    const auto it = answers_.find(request_id);
    if (it == answers_.end()) return approval::HumanAnswer::Unavailable;
    const rpc::Choice choice = it->second;
    answers_.erase(it);
    switch (choice) {
      case rpc::Choice::AllowOnce:
        return approval::HumanAnswer::AllowOnce;
      case rpc::Choice::AllowCommand:
        return approval::HumanAnswer::AllowForCommand;
      case rpc::Choice::Deny:
        break;
    }
    return approval::HumanAnswer::Deny;
  }

 private:
  void read_answers() {
    for (const auto& line : early_) take(line);
    char buffer[65536];
    for (;;) {
      std::vector<std::string> lines;
      const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      control_.feed(std::string_view(buffer, static_cast<std::size_t>(n)), lines);
      for (const auto& line : lines) take(line);
    }
    std::lock_guard lock(mutex_);
    closed_ = true;
    answered_.notify_all();
  }
  void take(const std::string& line) {
    auto request = rpc::parse_request(line);
    const auto* response = request ? std::get_if<rpc::ApprovalResponse>(&*request) : nullptr;
    std::lock_guard lock(mutex_);
    const auto pending = response == nullptr ? pending_.end() : pending_.find(response->request_id);
    if (pending != pending_.end() && response->choice == rpc::Choice::AllowCommand &&
        !pending->second) {
      pipe_.write(rpc::error_event("approval_response \"" + response->id +
                                       "\": allow-command was not offered for request_id \"" +
                                       response->request_id + "\"",
                                   id_));
      return;  // not an answer: the question stays open
    }
    if (response == nullptr || pending == pending_.end()) {
      pipe_.write(rpc::error_event(
          response == nullptr
              ? (request ? std::string("unexpected request for a running command")
                         : request.error().message)
              : "approval_response: unknown request_id \"" + response->request_id + "\"",
          id_));
      return;
    }
    // The first answer is final: the question is closed now, so a second answer (a deny
    // followed by an allow in the same write) is an unknown request_id.
    pending_.erase(pending);
    answers_[response->request_id] = response->choice;
    answered_.notify_all();
  }

  EventPipe& pipe_;
  std::string id_;
  rpc::LineSplitter& control_;
  std::vector<std::string> early_;
  std::mutex mutex_;
  std::condition_variable answered_;
  bool reader_started_ = false;
  bool closed_ = false;
  std::map<std::string, bool> pending_;  ///< open questions: request_id -> allow-command offered
  std::map<std::string, rpc::Choice> answers_;
};

struct WorkerArgs {
  std::string config;
  std::string reviewer;
  bool subagent = false;
};

/// Reads the first control line (the exec request). Complete lines read with it (an
/// answer the host sent early) go to `early`, a partial one stays in `control`: both are for
/// HostPrompt's reader.
std::optional<rpc::Exec> read_exec(rpc::LineSplitter& control, std::vector<std::string>& early) {
  char buffer[65536];
  std::vector<std::string> lines;
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

int worker(const WorkerArgs& worker_args) {
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, sig);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
  core::UniqueFd cancel(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));

  rpc::LineSplitter control;
  std::vector<std::string> early;
  auto exec = read_exec(control, early);
  if (!exec) return 2;
  EventPipe pipe;
  EventSink sink(pipe, exec->id);
  auto prompt = std::make_shared<HostPrompt>(pipe, exec->id, control, std::move(early));

  RunArgs args;
  args.policy.cwd = exec->cwd;
  args.policy.config = worker_args.config;
  args.approval.reviewer = worker_args.reviewer;
  if (exec->command)
    args.shell_command = *exec->command;
  else
    args.argv = exec->argv;
  args.timeout_seconds = exec->timeout_s.value_or(0);
  args.scope_key = exec->scope_key.value_or(exec->id);
  args.agent_name = exec->agent_name;
  args.subagent = worker_args.subagent;

  RunIo io;
  io.output = &sink;
  io.human = prompt;
  io.cancel_fd = cancel.get();
  io.stdin_fd = 3;
  const std::string id = exec->id;
  io.message = [&sink](const std::string& line) {
    sink.write(sandbox::Stream::Stderr, "pi-sandbox: " + line + "\n");
  };
  io.denied = [&pipe, id](std::string_view surface, const std::string& target,
                          const std::string& reason) {
    pipe.write(rpc::denied_event(id, surface, target, reason));
  };
  const sandbox::Outcome outcome = execute(args, io);
  sink.flush();
  rpc::ExitStatus status;
  if (outcome) {
    if (const auto* exited = std::get_if<sandbox::Exited>(&*outcome))
      status.exit_code = exited->code;
    else
      status.signal = std::get<sandbox::Signaled>(*outcome).signal;
  } else {
    switch (outcome.error().kind) {
      case sandbox::RunFailureKind::TimedOut:
        status.error = "timeout";
        status.message = timed_out_message(args.timeout_seconds);
        break;
      case sandbox::RunFailureKind::Aborted:
        status.error = "aborted";
        break;
      case sandbox::RunFailureKind::LaunchFailed:
        status.error = "launch_failed";
        status.message = outcome.error().message;
        break;
    }
  }
  pipe.write(rpc::exit_event(id, status));
  // Decisions may still be pending on proxy threads (they end with this process): leave
  // without running destructors under them.
  approval::kill_running_reviewers();
  std::fflush(nullptr);
  ::_exit(0);
}

}  // namespace

void add_serve_worker_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* cmd = app.add_subcommand("serve-worker", "");  // internal: no help line
  cmd->group("");
  cmd->add_option("--config", args->config);
  cmd->add_option("--reviewer", args->reviewer);
  cmd->add_flag("--subagent", args->subagent);
  cmd->callback([args, &exit_code] { exit_code = worker(*args); });
}

}  // namespace pisandbox::cli
