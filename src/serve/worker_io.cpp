#include "serve/worker_io.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "core/io.hpp"
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

approval::HumanAnswer HostPrompt::ask(const approval::HumanQuestion& question) {
  std::unique_lock lock(mutex_);
  if (!reader_started_) {
    // Started at the first question, which comes after the sandbox's clone (the
    // supervisor must be single-threaded at clone time).
    reader_started_ = true;
    std::thread([this] { read_answers(); }).detach();
  }
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

void HostPrompt::read_answers() {
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

void HostPrompt::take(const std::string& line) {
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

}  // namespace pisandbox::serve
