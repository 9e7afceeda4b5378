// pisandbox::serve::RemoteLedger — a serve worker's view of the session's ledger, which the serve
// process keeps for all its commands (docs/protocol.md, "Answers, sources and reasons": the
// breaker of a `scope_key` trips across commands; a session answer covers every command). Each call
// is one internal line on the event pipe and one reply on the control pipe
// (serve/ledger_lines.hpp).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "approval/ledger.hpp"
#include "serve/ledger_lines.hpp"
#include "serve/worker_io.hpp"

namespace pisandbox::serve {

/// approval::ScopeLedger over the worker's pipes. Thread-safe; each call waits for serve's
/// reply (serve answers at once, from its event loop). Once the control pipe has closed (serve
/// is gone) tripped() answers true and allowed_for_session() false: fail closed.
class RemoteLedger final : public approval::ScopeLedger {
 public:
  RemoteLedger(EventPipe& pipe, ControlReader& reader) : pipe_(pipe), reader_(reader) {}

  [[nodiscard]] bool tripped(std::string_view scope) override;
  void record(std::string_view scope, approval::ReviewOutcome outcome) override;
  void clear(std::string_view scope) override;
  [[nodiscard]] bool allowed_for_session(std::string_view destination) override;
  void allow_for_session(std::string_view destination) override;
  void note_denial(const approval::RecentDenial& denial) override;
  /// false once serve is gone (fail closed: no override).
  [[nodiscard]] bool take_override(std::string_view request_hash, std::string_view scope,
                                   approval::Recovery kind) override;

  /// Takes `line` if it is serve's reply to a call (returns true), else leaves it (false).
  bool take(const std::string& line);

  /// The control pipe has closed: waiting calls return their fail-closed answer.
  void close();

 private:
  /// Sends `request` (its seq filled in here) and waits for the reply's value.
  std::optional<bool> call(LedgerRequest request);

  EventPipe& pipe_;
  ControlReader& reader_;
  std::mutex mutex_;
  std::condition_variable replied_;
  std::uint64_t next_seq_ = 1;
  std::map<std::uint64_t, bool> replies_;
  bool closed_ = false;
};

}  // namespace pisandbox::serve
