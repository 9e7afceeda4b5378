// pisandbox::serve — how a serve worker talks to serve: whole JSON lines on the event pipe
// (its stdout), the command's output as `output` events, and approval questions asked of
// the host (docs/protocol.md).
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "approval/broker.hpp"
#include "rpc/protocol.hpp"
#include "sandbox/command.hpp"

namespace pisandbox::serve {

/// Whole-line writes to the event pipe, from any thread.
class EventPipe {
 public:
  /// Writes `line` (a JSON line ending in "\n") whole. serve gone: the line is lost.
  void write(const std::string& line);

 private:
  std::mutex mutex_;
};

/// The command's output as `output` events; a UTF-8 character split across reads is held
/// back until its last byte arrives, so text stays text.
class EventSink final : public sandbox::OutputSink {
 public:
  /// `id`: the command's id, named by every event.
  EventSink(EventPipe& pipe, std::string id) : pipe_(pipe), id_(std::move(id)) {}
  void write(sandbox::Stream stream, std::string_view bytes) override;
  /// Writes what is still held back (an incomplete character at the end of the output).
  void flush();

 private:
  EventPipe& pipe_;
  std::string id_;
  std::mutex mutex_;
  std::string held_[2];
};

/// The control pipe (the worker's stdin: the host's answers and serve's own lines), read by one
/// thread from the first question or ledger call on. That comes after the sandbox's clone, or
/// instead of it (a host-IPC question before a host run): the supervisor must be
/// single-threaded at clone time.
class ControlReader {
 public:
  /// `control`: the control pipe's splitter, past the exec line; `early`: complete lines read
  /// with the exec line, handled first.
  ControlReader(rpc::LineSplitter& control, std::vector<std::string> early)
      : control_(control), early_(std::move(early)) {}

  /// Where lines go (`line`, without its LF) and what happens at end of file; set once,
  /// before start().
  void route(std::function<void(const std::string&)> line, std::function<void()> closed);

  /// Starts the reader thread; later calls do nothing. Thread-safe.
  void start();

 private:
  void run();

  rpc::LineSplitter& control_;
  std::vector<std::string> early_;
  std::function<void(const std::string&)> line_;
  std::function<void()> closed_;
  std::once_flag started_;
};

/// The human is the host: each question is an `approval_request` event; the answer comes
/// back as an `approval_response` line on the control pipe (or serve settles the question).
class HostPrompt final : public approval::HumanPrompt {
 public:
  HostPrompt(EventPipe& pipe, std::string id, ControlReader& reader)
      : pipe_(pipe), id_(std::move(id)), reader_(reader) {}

  /// Asks the host and waits for its answer (docs/protocol.md, `approval_request`; the choices
  /// of approval::question_choices(), `expires_in_s` when the question has a deadline).
  /// Unavailable when the control pipe closes first. When the deadline passes unanswered the
  /// question is settled (`approval_settled`, deny by `unavailable`) and the reply is
  /// Unavailable with approval::unanswered_reason().
  approval::HumanReply ask(const approval::HumanQuestion& question) override;

  /// One control line for the questions: an `approval_response` of the host (refused with an
  /// `error` event when it matches no open question or answers with a choice not offered) or
  /// serve's settle line (the question is answered `allow-session` and the host told with
  /// `approval_settled`).
  void take(const std::string& line);

  /// The control pipe has closed: every open question is Unavailable.
  void close();

  /// Settles every question still open with a deny by `unavailable` and `reason`, telling the
  /// host (`approval_settled`): the command has ended. A later ask() is Unavailable with
  /// `reason` at once, without an event.
  void end(std::string_view reason) override;

 private:
  struct Answer {
    rpc::Choice choice = rpc::Choice::Deny;
    std::optional<std::string> source;
    std::string reason;
  };

  EventPipe& pipe_;
  std::string id_;
  ControlReader& reader_;
  std::mutex mutex_;
  std::condition_variable answered_;
  bool closed_ = false;
  std::optional<std::string> ended_;  ///< end()'s reason, once called
  std::map<std::string, bool>
      pending_;  ///< open questions: request_id -> remembered choices offered
  std::map<std::string, Answer> answers_;
};

}  // namespace pisandbox::serve
