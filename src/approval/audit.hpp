// pisandbox::approval — the audit line: one JSON object per decision.
//
// Source: docs/compatibility.md, "Approvals", and compatibility C56 (events `review_decision`,
// `grant_issued`, `grant_consumed`), C71 (`hard_deny`), C74 (`grant_rejected`). Pure
// formatting: the caller appends the line to the audit file.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "approval/boundary_request.hpp"
#include "approval/result.hpp"

namespace pisandbox::approval {

/// What an audit line records. Serialised as `review_decision`, `hard_deny`,
/// `grant_issued`, `grant_consumed`, `grant_rejected`.
enum class AuditEvent { ReviewDecision, HardDeny, GrantIssued, GrantConsumed, GrantRejected };

/// The event's name, e.g. `review_decision`.
[[nodiscard]] std::string_view to_string(AuditEvent event);

/// The decision-specific part of an audit line.
///   action: `allow`/`deny` when the line records a decision; left out when absent.
///   source: who decided (`reviewer`, `hard-deny`, …) or, for grant events, who asked
///           (the caller's word, e.g. `broker`); left out when empty.
///   reason: free text (a rule name and why, the rationale); left out when empty.
struct AuditDetails {
  std::optional<Action> action;
  std::string source;
  std::string reason;
};

/// The details of a decision: action, to_string(result.source), result.reason.
[[nodiscard]] AuditDetails details_of(const ApprovalResult& result);

/// One compact JSON object and a trailing "\n", keys in this order:
///   `time`: `wall_time` as RFC 3339 UTC with milliseconds, `2024-05-01T12:34:56.789Z`;
///   `event`; `request_hash` (64 hex digits, empty if hashing failed); `surface`;
///   `destination` if the request has one, else `command` if it has one, else `path`
///   (resolvedPath, else path) if it has one; `action`, `source`, `reason` per `details`;
///   last `command` and then `path` (resolvedPath, else path) when the request has them and
///   they were not the target above (docs/approvals.md, "The audit log": every line names the
///   command that asked and the path it reaches).
/// Newlines inside values are escaped, so the result is always exactly one line; bytes
/// that are not UTF-8 become U+FFFD. Never contains a grant token.
[[nodiscard]] std::string audit_line(AuditEvent event, const BoundaryRequest& request,
                                     const AuditDetails& details,
                                     std::chrono::system_clock::time_point wall_time);

/// `wall_time` as RFC 3339 UTC with milliseconds (truncated), e.g. `2024-05-01T12:34:56.789Z`.
[[nodiscard]] std::string rfc3339_utc(std::chrono::system_clock::time_point wall_time);

}  // namespace pisandbox::approval
