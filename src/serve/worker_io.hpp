// pisandbox::serve — how a serve worker talks to serve: whole JSON lines on the event pipe
// (its stdout), the command's output as `output` events, and approval questions asked of
// the host (docs/protocol.md).
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
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

/// The human is the host: each question is an `approval_request` event; the answer comes
/// back as an `approval_response` line on stdin, read by one reader thread.
class HostPrompt final : public approval::HumanPrompt {
 public:
  /// `control`: the control pipe's splitter, past the exec line; `early`: complete lines read
  /// with the exec line, taken first.
  HostPrompt(EventPipe& pipe, std::string id, rpc::LineSplitter& control,
             std::vector<std::string> early)
      : pipe_(pipe), id_(std::move(id)), control_(control), early_(std::move(early)) {}

  /// Asks the host and waits for its answer; Unavailable when stdin closes first.
  approval::HumanAnswer ask(const approval::HumanQuestion& question) override;

 private:
  void read_answers();
  void take(const std::string& line);

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

}  // namespace pisandbox::serve
