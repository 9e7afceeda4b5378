// pisandbox::approval::Broker — decides one boundary request: hard deny, remembered answers,
// one decision per identical request in flight, circuit breaker, automatic reviewer, human,
// then an exact one-shot grant.
//
// Source: docs/compatibility.md, "Approvals"; compatibility C51–C56 (pi-sandbox's side: reviewer
// deny is final, defer goes to the human, allow is consumed at once), C71 (the broker's
// order: validate → hard deny → breaker → reviewer → record), C72 (a failed review is a
// deny that counts as a denial), C73 (grants issued and consumed in the same process);
// docs/approvals.md, "The order of a decision" (identical requests share one decision,
// remembered answers, the scope's ledger) and "Sources and reasons" (who decided, and why).
#pragma once

#include <chrono>
#include <condition_variable>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "approval/audit.hpp"
#include "approval/boundary_request.hpp"
#include "approval/circuit_breaker.hpp"
#include "approval/clock.hpp"
#include "approval/grants.hpp"
#include "approval/hard_deny.hpp"
#include "approval/ledger.hpp"
#include "approval/result.hpp"
#include "approval/reviewer_output.hpp"
#include "core/error.hpp"

namespace pisandbox::approval {

/// What the reviewer is told besides the request (docs/approvals.md, "After a wrong denial").
///   user_retry: the user asked for one more review of exactly this request after an
///     automatic denial (`/auto-review-approve`): evidence for the reviewer, not an allow.
struct ReviewEvidence {
  bool user_retry = false;
};

/// The automatic reviewer (docs/compatibility.md, "Approvals"). Implementations: ReviewerProcess (a
/// program run without a shell); an RPC peer later.
class Reviewer {
 public:
  virtual ~Reviewer() = default;
  /// Reviews `request`. The error is why review failed, in words that follow
  /// kReviewUnavailablePrefix (`reviewer exited with status 3`). May block (seconds); may
  /// be called from several threads at once.
  [[nodiscard]] virtual std::expected<ReviewerVerdict, std::string> review(
      const BoundaryRequest& request, const ReviewEvidence& evidence) = 0;
};

/// The reason of an allow by the user's break-glass confirmation (docs/approvals.md, "After a
/// wrong denial").
inline constexpr std::string_view kBreakGlassReason =
    "Allowed once by the user's break-glass confirmation.";

/// The human's answer to one approval question (docs/approvals.md, "The question and its
/// answers": the choices in this order, Deny first, so that Enter and Esc answer Deny).
enum class HumanAnswer {
  Deny,             ///< `Deny`
  AllowOnce,        ///< `Allow this exact operation once`
  AllowForCommand,  ///< `Allow <destination> for the rest of this command` (network only)
  AllowForSession,  ///< `Allow <destination> for this session` (network only)
  Unavailable,      ///< nobody answered: no terminal, no UI, cancelled, or the deadline passed
};

/// What an asker returns: the answer and, when the asker knows better, who gave it and why
/// (`serve`'s host answers for a person, its own reviewer or a broker of its own;
/// docs/protocol.md, "Answers, sources and reasons").
///   source: who decided; absent means `human`. An allow may only come from `human` or
///           `reviewer` (anything else is taken as Unavailable).
///   reason: the reason shown to the user and the model; empty means the broker's default
///           for the answer and source (kHumanDenyReason, kNoHumanReason, ...).
struct HumanReply {
  HumanAnswer answer = HumanAnswer::Unavailable;
  std::optional<Source> source;
  std::string reason;
};

/// One question for the human (compatibility C57; docs/approvals.md, "The question and its
/// answers").
///   warning: the host-IPC warning line (compatibility C58), or empty.
///   reason:  why the question is asked (the reviewer's rationale on defer), or empty.
///   offer_remembered: also offer `Allow <destination> for the rest of this command` and
///     `Allow <destination> for this session` (network requests with a destination).
///   deadline: when the question is refused unanswered (HumanAnswer::Unavailable with
///     unanswered_reason()), on the broker's Clock; absent: no deadline. The asker says when.
struct HumanQuestion {
  const BoundaryRequest& request;
  std::string warning;
  std::string reason;
  bool offer_remembered = false;
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// One choice of a question: its answer, its protocol name (`deny`, `allow-once`,
/// `allow-command`, `allow-session`) and its label.
struct QuestionChoice {
  HumanAnswer answer;
  std::string_view name;
  std::string label;
};

/// The choices of `question`, in the order every asker shows them (docs/approvals.md, "The
/// question and its answers": Deny first, so that a default answer denies): `Deny`, `Allow this
/// exact operation once`, and with offer_remembered `Allow <destination> for the rest of this
/// command`, `Allow <destination> for this session`. The destination is shown as core::printable()
/// makes it.
[[nodiscard]] std::vector<QuestionChoice> question_choices(const HumanQuestion& question);

/// Asks a human (docs/compatibility.md, "Approvals"). Implementations serialise their questions:
/// two callers never see interleaved questions. May block until the human answers or the
/// question's deadline passes.
class HumanPrompt {
 public:
  virtual ~HumanPrompt() = default;
  [[nodiscard]] virtual HumanReply ask(const HumanQuestion& question) = 0;
  /// The command has ended: a question still open ends now as Unavailable with `reason`
  /// (whoever sees the question is told), and every later one at once. Returns when no
  /// question is open any more (the terminal has its settings back). Default: nothing open.
  virtual void end(std::string_view reason) { (void)reason; }
};

/// The reason of a question closed because its command ended first.
inline constexpr std::string_view kCommandEndedReason =
    "The command ended before the question was answered.";

/// Where audit lines go (docs/compatibility.md, "Approvals"). `line` is one audit_line() result,
/// ending in
/// "\n". Implementations must write each line whole (never interleaved with another) and
/// may be called from several threads at once.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  /// Errors: the write failed; the broker then denies (fail closed, see Broker::approve).
  [[nodiscard]] virtual core::Result<void> append(std::string_view line) = 0;
};

/// The reason of a deny with source `unavailable` when nobody could be asked.
inline constexpr std::string_view kNoHumanReason =
    "Approval needs a human, and none could be asked (no terminal, prompting off, or cancelled).";

/// The reason of a deny by the human.
inline constexpr std::string_view kHumanDenyReason = "Denied by the user.";

/// The reason of an allow by the human.
inline constexpr std::string_view kHumanAllowReason = "Allowed once by the user.";

/// The reason of an allow by the human for the rest of the command (docs/network.md, "Deciding a
/// destination").
inline constexpr std::string_view kHumanAllowForCommandReason =
    "Allowed by the user for the rest of this command.";

/// The reason of an allow by the human for the whole session (docs/approvals.md, "Sources
/// and reasons").
inline constexpr std::string_view kHumanAllowForSessionReason =
    "Allowed by the user for this session.";

/// The reason of a deny whose question's deadline passed unanswered (source `unavailable`):
/// `Nobody answered the question within <seconds> s.` (`approval.questionTimeoutSeconds`,
/// or the command's own timeout).
[[nodiscard]] std::string unanswered_reason(std::chrono::seconds waited);

/// The default reason of a deny by `source` when the answer gives none: kHumanDenyReason
/// (human), kNoHumanReason (unavailable), kInvalidGrantReason (invalid-grant),
/// `Denied by the automatic reviewer.` (reviewer), `Denied by a hard-deny rule.` (hard-deny).
[[nodiscard]] std::string default_deny_reason(Source source);

/// The prefix of the deny reason when the audit log cannot be written.
inline constexpr std::string_view kAuditUnavailablePrefix = "The audit log could not be written: ";

/// Per-call context of a decision.
///   session_id: the session grants are bound to (non-blank).
///   scope_key:  the circuit breaker's scope (for `run`: one per invocation; for hosts: the
///               key they pass, e.g. `<session>:turn:<n>`).
///   warning:    the warning line shown to the human (host IPC), or empty.
///   offer_remembered: the human may allow the destination for the rest of the command or
///               for the session (network requests); the broker then remembers the answer.
struct ApprovalContext {
  std::string session_id;
  std::string scope_key;
  std::string warning;
  bool offer_remembered = false;
};

/// What a review that failed after its retries becomes (`approval.reviewerFailureMode`):
/// Deny: a deny, source `reviewer`, kReviewUnavailableReason, counted as a denial by the
/// circuit breaker; Defer: the human is asked with kReviewUnavailableReason as the reason,
/// counted as a defer (not a denial).
enum class ReviewerFailureMode { Deny, Defer };

/// What a Broker is built from.
///   hard_deny: protected paths and home for find_hard_deny().
///   breaker:   the circuit breaker's limits (for the ledger the broker makes itself).
///   ledger:    the breaker states and session answers shared with other brokers of the
///              session (serve: every command of the serve process); null: a LocalLedger of
///              the broker's own with `breaker`.
///   grant_ttl: lifetime of a grant in seconds (clamped to [1, 300] by GrantStore).
///   question_timeout: how long a question stays open, in seconds
///              (`approval.questionTimeoutSeconds`); 0: no limit of its own.
///   command_deadline: when the command's own timeout ends, on the broker's Clock; a
///              question never outlasts it. Absent: the command has no timeout.
///   reviewer_failure: what a review that failed after its retries becomes
///              (`approval.reviewerFailureMode`, docs/approvals.md, "When review fails").
///   reviewer_retries: how many times a failed review (the program failed, timed out or
///              wrote an invalid verdict) is tried again, 0-5 (`approval.reviewerRetries`).
///   wall_clock: the time written in audit lines (tests may fix it).
struct BrokerOptions {
  HardDenyOptions hard_deny;
  CircuitBreakerLimits breaker;
  std::shared_ptr<ScopeLedger> ledger;
  std::chrono::seconds grant_ttl = kDefaultGrantTtl;
  std::chrono::seconds question_timeout{0};
  std::optional<std::chrono::steady_clock::time_point> command_deadline;
  ReviewerFailureMode reviewer_failure = ReviewerFailureMode::Deny;
  int reviewer_retries = 2;
  std::function<std::chrono::system_clock::time_point()> wall_clock = [] {
    return std::chrono::system_clock::now();
  };
};

/// The approval broker of one command. Thread-safe: approve() may be called from several
/// threads; the reviewer and the human are asked without holding the broker's lock, so one
/// slow answer never blocks the grants of other requests.
class Broker {
 public:
  /// `clock` and `audit` must outlive the broker; `reviewer` and `human` may be null (no
  /// reviewer configured; no terminal or `--no-prompt`) and otherwise must outlive it.
  Broker(BrokerOptions options, const Clock& clock, AuditSink& audit, Reviewer* reviewer,
         HumanPrompt* human);

  /// Decides `request` (docs/compatibility.md, "Approvals"; docs/approvals.md, "The order of a
  /// decision"):
  ///   1. validate() fails → deny, source `unavailable`, reason = the validation message;
  ///   2. find_hard_deny() matches → deny, source `hard-deny` (audit `hard_deny`; recorded
  ///      as a denial in the breaker; never asked);
  ///   3. a remembered answer for the request's destination (network requests): allowed for
  ///      the rest of this command or for the session (the ledger) → allow, source `human`;
  ///      denied earlier in this command by the human or by the reviewer's verdict → that
  ///      deny again (its source and reason). No audit line, no grant, no breaker record:
  ///      that decision was audited and counted once;
  ///   4. a decision for a request with the same request_hash() and session is in flight →
  ///      wait for it and share its result (one review, one question, one breaker record);
  ///   5. with a reviewer, the user's override for the request's hash (ScopeLedger::
  ///      take_override(), docs/approvals.md "After a wrong denial"): break-glass → allow,
  ///      source `human`, kBreakGlassReason (no review; the grant of step 8 follows); retry →
  ///      step 6 is skipped and the reviewer is told (ReviewEvidence::user_retry);
  ///   5b. the scope's breaker is tripped → deny, source `reviewer`, kCircuitBreakerReason;
  ///   6. reviewer (if any), tried again up to `reviewer_retries` times while it fails; still
  ///      failing → with ReviewerFailureMode::Deny a deny, source `reviewer`,
  ///      kReviewUnavailableReason (counts as a denial), with Defer the human with that reason
  ///      (counts as a defer); the audit line's reason says what failed
  ///      (`Automatic review is unavailable: <why>`); deny → final (every reviewer and
  ///      breaker deny is noted in the ledger for an override: break-glass when the reviewer
  ///      rated it critical, retry otherwise; the result's `recovery` names it)
  ///      (source `reviewer`, reason = rationale; remembered for the destination, network
  ///      requests of the command); allow → allow (source `reviewer`; for a network
  ///      destination with offer_remembered, AllowScope::Command: remembered for the rest of
  ///      the command like a person's allow-command, so the reviewer is asked once per
  ///      destination and command);
  ///      defer → the human with the rationale as reason;
  ///   7. human (if any, and always when there is no reviewer), unless the destination was
  ///      allowed for the session meanwhile: the reply's answer, source (default `human`) and
  ///      reason (default per answer); an allow for the command or the session is remembered
  ///      (the session's in the ledger), and so is a human's deny; unavailable (or no
  ///      human) → deny, source `unavailable`, the asker's reason or kNoHumanReason;
  ///   8. every allow (each waiter of step 4 its own) issues a grant and consumes it at once
  ///      (compatibility C55); a failure → deny, source `invalid-grant`, kInvalidGrantReason.
  /// Audit events in order: `hard_deny` | `review_decision` (once per decision), then for
  /// each allowed request `grant_issued` and `grant_consumed` (or `grant_rejected`). If any
  /// audit line cannot be written the result is a deny, source `unavailable`, `The audit log
  /// could not be written: <error>` (fail closed: no unrecorded allow).
  [[nodiscard]] ApprovalResult approve(const BoundaryRequest& request,
                                       const ApprovalContext& context);

  /// Waits until no approve() call is running any more, for at most `limit` (milliseconds).
  /// Called once the command has ended and its open questions with it (HumanPrompt::end()),
  /// so that the decisions those questions end still write their audit lines before the
  /// process exits. Returns whether none is running.
  bool wait_idle(std::chrono::milliseconds limit);

  /// Forgets the breaker state of one scope (e.g. when a turn ends).
  void clear_scope(std::string_view scope);

  /// How many approve() calls are waiting now for an identical decision in flight (step 4),
  /// for tests and diagnostics.
  [[nodiscard]] std::size_t waiting();

 private:
  struct Decision;
  struct InFlight;
  // The remembered answer for `request`'s destination in this command; the caller holds mutex_.
  [[nodiscard]] std::optional<ApprovalResult> remembered(const BoundaryRequest& request);
  [[nodiscard]] ApprovalResult decide(const BoundaryRequest& request,
                                      const ApprovalContext& context, Decision& decision);
  [[nodiscard]] ApprovalResult review_and_ask(const BoundaryRequest& request,
                                              const ApprovalContext& context, Decision& decision);
  // The reviewer's verdict, tried 1 + reviewer_retries times while it fails.
  [[nodiscard]] std::expected<ReviewerVerdict, std::string> review(const BoundaryRequest& request,
                                                                   const ReviewEvidence& evidence);
  // Notes a deny of the reviewer or the breaker for an override (ScopeLedger::note_denial())
  // and names the override in `result`.
  void note_denial(const BoundaryRequest& request, const ApprovalContext& context,
                   ApprovalResult& result, Recovery recovery);
  [[nodiscard]] ApprovalResult ask_human(const BoundaryRequest& request,
                                         const ApprovalContext& context, std::string reason);
  void remember(const BoundaryRequest& request, const ApprovalContext& context,
                const ApprovalResult& result);
  [[nodiscard]] ApprovalResult grant_once(const BoundaryRequest& request,
                                          const ApprovalContext& context, ApprovalResult allow,
                                          Decision& decision);
  void audit(AuditEvent event, const BoundaryRequest& request, const AuditDetails& details,
             Decision& decision);

  BrokerOptions options_;
  const Clock& clock_;
  AuditSink& audit_;
  Reviewer* reviewer_;
  HumanPrompt* human_;
  std::shared_ptr<ScopeLedger> ledger_;
  std::mutex mutex_;                 // guards grants_, remembered_, in_flight_ and active_
  std::condition_variable idle_cv_;  // notified when active_ drops to 0
  std::size_t active_ = 0;           // approve() calls running
  GrantStore grants_;
  std::map<std::string, ApprovalResult, std::less<>> remembered_;            // by destination
  std::map<std::string, std::shared_ptr<InFlight>, std::less<>> in_flight_;  // by session + hash
};

}  // namespace pisandbox::approval
