// pisandbox::approval — the vocabulary of decisions: review outcomes and approval results.
//
// Source: compatibility C56 (result shape) and C70 (review outcomes).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace pisandbox::approval {

/// What the broker finally does with a boundary request (compatibility C56).
enum class Action { Allow, Deny };

/// Who decided (compatibility C56). Serialised as `hard-deny`, `reviewer`, `human`,
/// `unavailable`, `invalid-grant`.
enum class Source { HardDeny, Reviewer, Human, Unavailable, InvalidGrant };

/// The answer of an automatic review (compatibility C70). `Defer` hands the request to
/// the human; the circuit breaker counts only `Deny` as a denial (compatibility C75).
enum class ReviewOutcome { Allow, Deny, Defer };

/// How far an allow reaches (docs/network.md, "Deciding a destination"; docs/approvals.md, "The
/// question and its answers"):
/// this one request, every later request for the destination in this command, or in this
/// session (`serve`: the serve process; `run`: the run).
enum class AllowScope { Once, Command, Session };

/// How the user may get past one automatic denial (docs/approvals.md, "After a wrong
/// denial"): Retry (`/auto-review-approve`: one more review of exactly that request, with the
/// user's word as evidence) for a non-critical denial by the reviewer or the circuit breaker;
/// BreakGlass (`/auto-review-break-glass`: one allow without review, after a typed
/// confirmation) for a denial the reviewer rated critical. Hard denies have neither.
enum class Recovery { Retry, BreakGlass };

/// `retry` or `break-glass`.
[[nodiscard]] constexpr std::string_view to_string(Recovery recovery) {
  return recovery == Recovery::BreakGlass ? "break-glass" : "retry";
}

/// `retry` / `break-glass`; nullopt for anything else.
[[nodiscard]] constexpr std::optional<Recovery> recovery_from_string(std::string_view text) {
  if (text == "retry") return Recovery::Retry;
  if (text == "break-glass") return Recovery::BreakGlass;
  return std::nullopt;
}

/// The name of `recovery` as a `denied` event carries it (docs/protocol.md, "Events"): `retry`,
/// `break-glass`, or empty when there is none.
[[nodiscard]] constexpr std::string_view to_string(const std::optional<Recovery>& recovery) {
  return recovery ? to_string(*recovery) : std::string_view();
}

/// The result of one approval (compatibility C56): `{action, source, reason}`.
///   reason: one line for the user; empty when there is nothing to say.
///   scope:  for an allow by the human, how far it reaches (the broker remembers it).
///   recovery: for an automatic denial the user may override, how (Retry or BreakGlass, as
///     the broker noted it among the recent denials); nullopt for every other result, a hard
///     deny included (docs/approvals.md, "After a wrong denial").
struct ApprovalResult {
  Action action = Action::Deny;
  Source source = Source::Unavailable;
  std::string reason;
  AllowScope scope = AllowScope::Once;
  std::optional<Recovery> recovery = std::nullopt;

  friend bool operator==(const ApprovalResult&, const ApprovalResult&) = default;
};

/// `allow` or `deny`.
[[nodiscard]] constexpr std::string_view to_string(Action action) {
  return action == Action::Allow ? "allow" : "deny";
}

/// `hard-deny`, `reviewer`, `human`, `unavailable` or `invalid-grant`.
[[nodiscard]] constexpr std::string_view to_string(Source source) {
  switch (source) {
    case Source::HardDeny:
      return "hard-deny";
    case Source::Reviewer:
      return "reviewer";
    case Source::Human:
      return "human";
    case Source::Unavailable:
      return "unavailable";
    case Source::InvalidGrant:
      return "invalid-grant";
  }
  return "unavailable";
}

/// `allow`, `deny` or `defer`.
[[nodiscard]] constexpr std::string_view to_string(ReviewOutcome outcome) {
  switch (outcome) {
    case ReviewOutcome::Allow:
      return "allow";
    case ReviewOutcome::Deny:
      return "deny";
    case ReviewOutcome::Defer:
      return "defer";
  }
  return "deny";
}

/// Parses `allow` / `deny` (exact, lowercase); nullopt for anything else.
[[nodiscard]] constexpr std::optional<Action> action_from_string(std::string_view text) {
  if (text == "allow") return Action::Allow;
  if (text == "deny") return Action::Deny;
  return std::nullopt;
}

/// Parses the five source names of to_string(Source); nullopt for anything else.
[[nodiscard]] constexpr std::optional<Source> source_from_string(std::string_view text) {
  for (Source s : {Source::HardDeny, Source::Reviewer, Source::Human, Source::Unavailable,
                   Source::InvalidGrant}) {
    if (to_string(s) == text) return s;
  }
  return std::nullopt;
}

/// Parses `allow` / `deny` / `defer` (exact, lowercase); nullopt for anything else.
[[nodiscard]] constexpr std::optional<ReviewOutcome> review_outcome_from_string(
    std::string_view text) {
  for (ReviewOutcome o : {ReviewOutcome::Allow, ReviewOutcome::Deny, ReviewOutcome::Defer}) {
    if (to_string(o) == text) return o;
  }
  return std::nullopt;
}

}  // namespace pisandbox::approval
