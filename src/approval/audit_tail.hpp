// pisandbox::approval — reading the audit file back: the lines of one request grouped into
// one decision, shown as one readable line or one JSON object (`pi-sandbox approvals tail`).
//
// Source: docs/approvals.md, "The audit log" and "Reading the log: `pi-sandbox approvals
// tail`" (one line per decision with the command, destination, source and reason; --json;
// filters by surface and decision).
// Pure: the caller reads the file and prints.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::approval {

/// One decision read back from the audit file. The strings are the audit line's values as
/// written (UTF-8, not yet made printable); a field the line did not have is empty.
struct AuditDecision {
  std::string time;          ///< `time` of the line that decided (RFC 3339 UTC)
  std::string action;        ///< `allow` or `deny`
  std::string source;        ///< `human`, `reviewer`, `hard-deny`, `unavailable`, `invalid-grant`
  std::string surface;       ///< `network`, `host-ipc`, `filesystem-read`, `filesystem-write`
  std::string destination;   ///< `<host>:<port>` of a network request
  std::string path;          ///< the path of a filesystem request
  std::string command;       ///< the command that asked
  std::string reason;        ///< why, as the decision gave it
  std::string request_hash;  ///< 64 hex digits: what the lines were grouped by
  /// The events grouped into this decision, in file order, e.g.
  /// `review_decision grant_issued grant_consumed`.
  std::vector<std::string> events;
  /// Set (to the line, as read) when the line was not an audit JSON object; every other
  /// field is then empty.
  std::optional<std::string> unreadable;
};

/// Groups audit lines into decisions, in the order of the line that decided.
///
/// A decision starts with `review_decision` or `hard_deny` (or any other event with an
/// `action`). The `grant_issued` and `grant_consumed` lines that follow with the same
/// `request_hash` belong to it and change nothing shown; grant lines with no open decision
/// (more requests that shared one decision, the start of the file cut off) are left out. A
/// `grant_rejected` turns the open allow of its hash into a deny with source `invalid-grant`
/// and the rejection's reason, or, with no open allow, is a deny of its own.
class AuditGrouper {
 public:
  /// Reads one audit line (without its newline; an empty line is skipped). Returns the
  /// decisions this line completed, in order: a deny is complete at once, an allow when
  /// its grant is consumed or rejected, or when a later decision has the same hash; a
  /// complete decision still waits for the open decisions before it.
  std::vector<AuditDecision> add_line(std::string_view line);

  /// Returns every decision not yet returned, complete or not, in order (end of input, or
  /// nothing more to read for now).
  std::vector<AuditDecision> flush();

 private:
  struct Open {
    AuditDecision decision;
    bool complete = false;
    unsigned long long serial = 0;
  };
  std::vector<AuditDecision> take_complete();

  std::deque<Open> queue_;
  std::map<std::string, unsigned long long, std::less<>> open_allow_;  // hash -> serial
  unsigned long long next_serial_ = 0;
};

/// Which decisions to show: empty means any.
struct AuditFilter {
  std::string surface;  ///< one of the four surface names
  std::string action;   ///< `allow` or `deny`
};

/// Whether `decision` passes `filter`. An unreadable line passes only an empty filter.
[[nodiscard]] bool matches(const AuditDecision& decision, const AuditFilter& filter);

/// The longest command, in bytes, a readable line shows before cutting it with `…`.
inline constexpr std::size_t kTailCommandBytes = 80;

/// The source in words: `by the user` (human), `by the reviewer`, `hard deny`,
/// `nobody could be asked` (unavailable), `invalid grant`; another value as `by <value>`.
[[nodiscard]] std::string source_in_words(std::string_view source);

/// One readable line, without a newline:
///   `<time> <action> <surface> <target>[ (<command>)] <source in words>[: <reason>]`
/// where the target is the destination, else the path, else the command, and the command
/// in parentheses is left out when it is the target. A hard deny whose reason is
/// `Hard deny (<rule>): <what>` ends in `hard deny (<rule>): <what>` instead of saying it
/// twice. The command is cut to
/// kTailCommandBytes (on a UTF-8 boundary) followed by `…`; every value goes through
/// core::printable(), so the line is one line whatever the file held. An unreadable line
/// shows as `(unreadable audit line) <line, printable, cut to 200 bytes>`. Example:
/// `2024-05-01T12:34:56.789Z allow network example.com:443 (curl https://example.com)`
/// ` by the reviewer: Known host.`
[[nodiscard]] std::string readable_line(const AuditDecision& decision);

/// One compact JSON object, without a newline, keys in this order: `time`, `action`,
/// `source`, `surface`, then `destination`, `path`, `command`, `reason` when present (whole,
/// not cut), `request_hash`, `events` (array). An unreadable line gives
/// `{"unreadable": "<line>"}`. Bytes that are not UTF-8 become U+FFFD.
[[nodiscard]] std::string json_line(const AuditDecision& decision);

}  // namespace pisandbox::approval
