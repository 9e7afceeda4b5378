// pisandbox::serve — the internal lines between serve and its workers for the session's ledger
// (docs/protocol.md, "Answers, sources and reasons"): a worker asks serve about the circuit breaker
// of its scope and the destinations allowed for the session; serve answers, and closes open
// questions that a session answer covers. They travel over the worker's existing pipes (a worker's
// event pipe, its control pipe) and never reach the host: serve reads each one itself, and a host's
// line is only ever forwarded to a worker after it was parsed as an `approval_response`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "approval/ledger.hpp"
#include "approval/result.hpp"

namespace pisandbox::serve {

/// What a worker asks of the serve process's ledger (approval::ScopeLedger's calls).
enum class LedgerOp {
  Tripped,
  Record,
  Clear,
  SessionAllowed,
  AllowSession,
  NoteDenial,
  TakeOverride
};

/// One question of a worker: `{"type":"ledger","seq":N,"op":"<op>",...}`.
///   seq: the worker's number for the call (the reply names it).
///   scope / outcome: for tripped, record, clear. destination: for session_allowed,
///   allow_session. scope, request_hash, recovery (and surface, target, reason, command for
///   note_denial): for note_denial and take_override (approval::ScopeLedger).
struct LedgerRequest {
  std::uint64_t seq = 0;
  LedgerOp op = LedgerOp::Tripped;
  std::string scope;
  approval::ReviewOutcome outcome = approval::ReviewOutcome::Deny;
  std::string destination;
  std::string request_hash = {};
  approval::Recovery recovery = approval::Recovery::Retry;
  std::string surface = {};
  std::string target = {};
  std::string reason = {};
  std::string command = {};
};

/// The line of `request` (JSON ending in "\n").
[[nodiscard]] std::string ledger_request_line(const LedgerRequest& request);

/// Whether `line` (without its "\n") is a worker's ledger line, for serve to keep to itself.
[[nodiscard]] bool is_ledger_request(std::string_view line);

/// Parses a ledger line; nullopt for anything else or a malformed one.
[[nodiscard]] std::optional<LedgerRequest> parse_ledger_request(std::string_view line);

/// serve's answer: `{"type":"ledger_reply","seq":N,"value":true|false}` "\n" (the value of
/// tripped, session_allowed and take_override; true for the others).
[[nodiscard]] std::string ledger_reply_line(std::uint64_t seq, bool value);

/// A reply: its seq and value; nullopt for anything else.
struct LedgerReply {
  std::uint64_t seq = 0;
  bool value = false;
};
[[nodiscard]] std::optional<LedgerReply> parse_ledger_reply(std::string_view line);

/// serve closes the worker's open question `request_id`: the destination was allowed for the
/// session by another answer. `{"type":"settle","request_id":"<id>"}` "\n".
[[nodiscard]] std::string settle_line(std::string_view request_id);

/// The request_id of a settle line; nullopt for anything else.
[[nodiscard]] std::optional<std::string> parse_settle(std::string_view line);

}  // namespace pisandbox::serve
