// pisandbox::approval — the reviewer program's answer: one JSON object on stdout.
//
// Source: compatibility C70 (review fields), C72 (a failed review is a deny with
// `Automatic review is unavailable: <error>`) and C78 (the output contract).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "approval/result.hpp"
#include "core/error.hpp"

namespace pisandbox::approval {

/// How risky the reviewer judges the request (compatibility C70).
enum class RiskLevel { Low, Medium, High, Critical };

/// How clearly the user authorised the operation, as judged by the reviewer (compatibility C70).
/// `Unknown` when the reviewer does not say.
enum class UserAuthorization { Unknown, Low, Medium, High };

/// `low`, `medium`, `high` or `critical`.
[[nodiscard]] std::string_view to_string(RiskLevel level);

/// `unknown`, `low`, `medium` or `high`.
[[nodiscard]] std::string_view to_string(UserAuthorization authorization);

/// The longest rationale accepted, in characters counted as JavaScript counts them
/// (UTF-16 code units), as in the reference (compatibility C78).
inline constexpr std::size_t kMaxRationaleChars = 600;

/// The longest reviewer stdout accepted, in bytes.
inline constexpr std::size_t kMaxReviewerOutputBytes = 64 * 1024;

/// The prefix of the audit log's reason when review fails (compatibility C72): what failed
/// follows it, for the user reading the log; review_unavailable_reason().
inline constexpr std::string_view kReviewUnavailablePrefix = "Automatic review is unavailable: ";

/// The reason of a deny (or a deferred question) after review failed, the same whatever failed
/// (compatibility C72): the agent learns that review is unavailable, never the reviewer's
/// error text, which may carry its output.
inline constexpr std::string_view kReviewUnavailableReason = "Automatic review is unavailable.";

/// One parsed review.
struct ReviewerVerdict {
  ReviewOutcome outcome = ReviewOutcome::Deny;
  RiskLevel risk_level = RiskLevel::Critical;
  UserAuthorization user_authorization = UserAuthorization::Unknown;
  std::string rationale;  ///< non-blank, at most kMaxRationaleChars characters

  friend bool operator==(const ReviewerVerdict&, const ReviewerVerdict&) = default;
};

/// Whether parse_reviewer_output() also rejects verdicts that contradict themselves
/// (compatibility C78): `allow` with `critical` risk; `allow` with `high` risk unless
/// `user_authorization` is `medium` or `high`; `defer` with `low` or `critical` risk.
enum class ConsistencyRules { Enforce, Skip };

/// Options of parse_reviewer_output().
struct ReviewerOutputOptions {
  ConsistencyRules consistency = ConsistencyRules::Enforce;
};

/// Parses the reviewer's stdout: exactly one JSON object (whitespace around it allowed)
/// with exactly the keys `outcome` (`allow`|`deny`|`defer`), `risk_level`
/// (`low`|`medium`|`high`|`critical`), `rationale` (non-blank string, at most 600
/// characters) and optionally `user_authorization` (`unknown`|`low`|`medium`|`high`).
/// The error message says why the output was refused, in words meant to follow
/// kReviewUnavailablePrefix, e.g. `reviewer output has unknown key "confidence"`,
/// `reviewer output is not valid JSON: <parser message>`,
/// `reviewer output outcome must be one of allow, deny, defer`,
/// `reviewer output rationale is longer than 600 characters`,
/// `reviewer output is inconsistent: allow with critical risk`.
[[nodiscard]] core::Result<ReviewerVerdict> parse_reviewer_output(
    std::string_view text, ReviewerOutputOptions options = {});

/// `Automatic review is unavailable: <why>` — the audit log's reason for a failed review.
[[nodiscard]] std::string review_unavailable_reason(std::string_view why);

}  // namespace pisandbox::approval
