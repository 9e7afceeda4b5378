#include "serve/worker_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/io.hpp"
#include "serve/ledger_lines.hpp"
#include "session/approval_setup.hpp"

namespace pisandbox::serve {

void EventPipe::write(const std::string& line) {
  std::lock_guard lock(mutex_);
  // serve gone: the line is lost, and the parent-death signal ends this worker.
  (void)core::write_all(STDOUT_FILENO, line);
}

void EventSink::write(sandbox::Stream stream, std::string_view bytes) {
  std::lock_guard lock(mutex_);
  std::string& held = held_[stream == sandbox::Stream::Stderr];
  held.append(bytes);
  const std::size_t keep = rpc::incomplete_utf8_tail(held);
  if (held.size() == keep) return;
  const std::string_view ready = std::string_view(held).substr(0, held.size() - keep);
  pipe_.write(rpc::output_event(id_, stream == sandbox::Stream::Stderr, ready));
  held.erase(0, held.size() - keep);
}

void EventSink::flush() {
  std::lock_guard lock(mutex_);
  for (int i = 0; i < 2; ++i)
    if (!held_[i].empty()) pipe_.write(rpc::output_event(id_, i == 1, held_[i]));
}

void ControlReader::route(std::function<void(const std::string&)> line,
                          std::function<void()> closed) {
  line_ = std::move(line);
  closed_ = std::move(closed);
}

void ControlReader::start() {
  std::call_once(started_, [this] { std::thread([this] { run(); }).detach(); });
}

void ControlReader::run() {
  for (const auto& line : early_) line_(line);
  char buffer[65536];
  for (;;) {
    std::vector<std::string> lines;
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    control_.feed(std::string_view(buffer, static_cast<std::size_t>(n)), lines);
    for (const auto& line : lines) line_(line);
  }
  closed_();
}

namespace {

approval::HumanAnswer answer_of(rpc::Choice choice) {
  switch (choice) {
    case rpc::Choice::AllowOnce:
      return approval::HumanAnswer::AllowOnce;
    case rpc::Choice::AllowCommand:
      return approval::HumanAnswer::AllowForCommand;
    case rpc::Choice::AllowSession:
      return approval::HumanAnswer::AllowForSession;
    case rpc::Choice::Deny:
      break;
  }
  return approval::HumanAnswer::Deny;
}

}  // namespace

approval::HumanReply HostPrompt::ask(const approval::HumanQuestion& question) {
  const auto asked = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  if (ended_) return {approval::HumanAnswer::Unavailable, std::nullopt, *ended_};
  reader_.start();
  // Unguessable and never reused: a stale or early answer can match no other question.
  const std::string request_id = session::new_id("r-");
  nlohmann::ordered_json event = {{"type", "approval_request"},
                                  {"id", id_},
                                  {"request_id", request_id},
                                  {"request", approval::to_json(question.request)}};
  event["title"] = "Sandbox approval required: " + question.request.operation + " " +
                   approval::approval_target(question.request);
  if (!question.warning.empty()) event["warning"] = question.warning;
  if (!question.reason.empty()) event["reason"] = question.reason;
  nlohmann::ordered_json choices = nlohmann::ordered_json::array();
  for (const auto& choice : approval::question_choices(question))
    choices.push_back({{"choice", choice.name}, {"label", choice.label}});
  event["choices"] = choices;
  std::chrono::seconds left{0};
  if (question.deadline) {
    left = std::max(std::chrono::seconds(0),
                    std::chrono::ceil<std::chrono::seconds>(*question.deadline - asked));
    event["expires_in_s"] = left.count();
  }
  pending_[request_id] = question.offer_remembered;
  pipe_.write(event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  const auto done = [&] { return answers_.contains(request_id) || closed_; };
  if (!question.deadline) {
    answered_.wait(lock, done);
  } else if (!answered_.wait_until(lock, *question.deadline, done)) {
    // Nobody answered in time: the question is closed, and the host told so.
    pending_.erase(request_id);
    std::string reason = approval::unanswered_reason(left);
    pipe_.write(rpc::approval_settled_event(id_, request_id, rpc::Choice::Deny,
                                            approval::to_string(approval::Source::Unavailable),
                                            reason));
    return {approval::HumanAnswer::Unavailable, std::nullopt, std::move(reason)};
  }
  pending_.erase(request_id);  // unanswered (stdin closed): later answers are unknown
  const auto it = answers_.find(request_id);
  if (it == answers_.end()) return {};
  Answer answer = std::move(it->second);
  answers_.erase(it);
  approval::HumanReply reply{answer_of(answer.choice), std::nullopt, std::move(answer.reason)};
  if (answer.source) reply.source = approval::source_from_string(*answer.source);
  return reply;
}

void HostPrompt::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  answered_.notify_all();
}

void HostPrompt::end(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ended_ = std::string(reason);
  for (const auto& [request_id, offered] : pending_) {
    answers_[request_id] = {rpc::Choice::Deny, "unavailable", std::string(reason)};
    pipe_.write(
        rpc::approval_settled_event(id_, request_id, rpc::Choice::Deny, "unavailable", reason));
  }
  pending_.clear();
  answered_.notify_all();
}

void HostPrompt::take(const std::string& line) {
  if (auto settled = parse_settle(line)) {
    // Another command's answer allowed the destination for the session (`approval_settled`:
    // docs/protocol.md, "Answers, sources and reasons").
    std::lock_guard lock(mutex_);
    if (pending_.erase(*settled) == 0) return;  // answered meanwhile
    answers_[*settled] = {rpc::Choice::AllowSession, "human", {}};
    pipe_.write(rpc::approval_settled_event(id_, *settled, rpc::Choice::AllowSession, "human",
                                            approval::kHumanAllowForSessionReason));
    answered_.notify_all();
    return;
  }
  auto request = rpc::parse_request(line);
  const auto* response = request ? std::get_if<rpc::ApprovalResponse>(&*request) : nullptr;
  std::lock_guard lock(mutex_);
  const auto pending = response == nullptr ? pending_.end() : pending_.find(response->request_id);
  if (pending != pending_.end() && !pending->second &&
      (response->choice == rpc::Choice::AllowCommand ||
       response->choice == rpc::Choice::AllowSession)) {
    pipe_.write(rpc::error_event("approval_response \"" + response->id +
                                     "\": " + std::string(rpc::to_string(response->choice)) +
                                     " was not offered for request_id \"" + response->request_id +
                                     "\"",
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
  answers_[response->request_id] = {response->choice, response->source,
                                    response->reason.value_or("")};
  answered_.notify_all();
}

}  // namespace pisandbox::serve
