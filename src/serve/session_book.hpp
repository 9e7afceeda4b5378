// pisandbox::serve::SessionBook — what the serve process keeps for its whole session
// (docs/protocol.md, "Answers, sources and reasons"): the ledger every command shares (the circuit
// breaker of each `scope_key`, the destinations allowed for the session) and the open network
// questions of each command, so that an `allow-session` answer settles the other questions it
// covers.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "approval/ledger.hpp"

namespace pisandbox::serve {

class SessionBook {
 public:
  /// Writes `line` (ending in "\n") to the control pipe of command `id`'s worker.
  using Send = std::function<void(const std::string& id, const std::string& line)>;

  explicit SessionBook(Send send) : send_(std::move(send)) {}

  /// Answers the ledger line `line` of command `id` (serve/ledger_lines.hpp) from the
  /// session's ledger; a malformed line is ignored. An allow for the session also settles
  /// every open question of every command for that destination.
  void answer(const std::string& id, std::string_view line);

  /// Notes the `approval_request` event `line` of command `id` (network questions only); one
  /// for a destination already allowed for the session is settled at once.
  void opened(const std::string& id, std::string_view line);

  /// The `approval_settled` event `line` of command `id`: that question is closed.
  void settled(const std::string& id, std::string_view line);

  /// The host answered `request_id` of command `id` (or tried to): it is closed.
  void answered(const std::string& id, const std::string& request_id);

  /// Command `id` has ended: the request_ids of its questions still open, now forgotten.
  [[nodiscard]] std::vector<std::string> ended(const std::string& id);

  /// The session's ledger, for the host's `recent_denials` and `override` requests
  /// (docs/protocol.md).
  [[nodiscard]] approval::LocalLedger& ledger() { return ledger_; }

 private:
  void settle(const std::string& destination);

  Send send_;
  approval::LocalLedger ledger_;
  /// command id -> request_id -> destination
  std::map<std::string, std::map<std::string, std::string>> open_;
};

}  // namespace pisandbox::serve
