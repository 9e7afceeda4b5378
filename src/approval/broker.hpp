// pisandbox::approval::Broker — decides one boundary request: hard deny, circuit breaker,
// automatic reviewer, human, then an exact one-shot grant.
//
// Source: docs/compatibility.md, "Approvals"; compatibility C51–C56 (pi-sandbox's side: reviewer
// deny is final, defer goes to the human, allow is consumed at once), C71 (the broker's
// order: validate → hard deny → breaker → reviewer → record), C72 (a failed review is a
// deny that counts as a denial), C73 (grants issued and consumed in the same process).
#pragma once

#include <chrono>
#include <expected>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include "approval/audit.hpp"
#include "approval/boundary_request.hpp"
#include "approval/circuit_breaker.hpp"
#include "approval/clock.hpp"
#include "approval/grants.hpp"
#include "approval/hard_deny.hpp"
#include "approval/result.hpp"
#include "approval/reviewer_output.hpp"
#include "core/error.hpp"

namespace pisandbox::approval {

/// The automatic reviewer (docs/compatibility.md, "Approvals"). Implementations: ReviewerProcess (a
/// program run without a shell); an RPC peer later.
class Reviewer {
 public:
  virtual ~Reviewer() = default;
  /// Reviews `request`. The error is why review failed, in words that follow
  /// kReviewUnavailablePrefix (`reviewer exited with status 3`). May block (seconds); may
  /// be called from several threads at once.
  [[nodiscard]] virtual std::expected<ReviewerVerdict, std::string> review(
      const BoundaryRequest& request) = 0;
};

/// The human's answer to one approval question.
enum class HumanAnswer {
  AllowOnce,        ///< `Allow this exact operation once`
  AllowForCommand,  ///< `Allow <destination> for the rest of this command` (network only)
  Deny,             ///< `Deny`
  Unavailable,      ///< no terminal, no UI, or the question was cancelled (EOF, Ctrl-C)
};

/// One question for the human (compatibility C57).
///   warning: the host-IPC warning line (compatibility C58), or empty.
///   reason:  why the question is asked (the reviewer's rationale on defer), or empty.
///   offer_for_command: also offer `Allow <destination> for the rest of this command`
///     (docs/network.md, "Deciding a destination"; network requests of one command).
struct HumanQuestion {
  const BoundaryRequest& request;
  std::string warning;
  std::string reason;
  bool offer_for_command = false;
};

/// Asks a human (docs/compatibility.md, "Approvals"). Implementations serialise their questions:
/// two callers never see interleaved questions. May block until the human answers.
class HumanPrompt {
 public:
  virtual ~HumanPrompt() = default;
  [[nodiscard]] virtual HumanAnswer ask(const HumanQuestion& question) = 0;
};

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

/// The prefix of the deny reason when the audit log cannot be written.
inline constexpr std::string_view kAuditUnavailablePrefix = "The audit log could not be written: ";

/// Per-call context of a decision.
///   session_id: the session grants are bound to (non-blank).
///   scope_key:  the circuit breaker's scope (for `run`: one per invocation; for hosts: the
///               key they pass, e.g. `<session>:turn:<n>`).
///   warning:    the warning line shown to the human (host IPC), or empty.
///   offer_for_command: the human may allow the destination for the rest of the command
///               (network requests of `run`); the result then has for_command set.
struct ApprovalContext {
  std::string session_id;
  std::string scope_key;
  std::string warning;
  bool offer_for_command = false;
};

/// What a Broker is built from.
///   hard_deny: protected paths and home for find_hard_deny().
///   breaker:   the circuit breaker's limits.
///   grant_ttl: lifetime of a grant in seconds (clamped to [1, 300] by GrantStore).
///   wall_clock: the time written in audit lines (tests may fix it).
struct BrokerOptions {
  HardDenyOptions hard_deny;
  CircuitBreakerLimits breaker;
  std::chrono::seconds grant_ttl = kDefaultGrantTtl;
  std::function<std::chrono::system_clock::time_point()> wall_clock = [] {
    return std::chrono::system_clock::now();
  };
};

/// The approval broker. Thread-safe: approve() may be called from several threads; the
/// reviewer and the human are asked without holding the broker's lock, so one slow answer
/// never blocks the breaker or the grants of other requests.
class Broker {
 public:
  /// `clock` and `audit` must outlive the broker; `reviewer` and `human` may be null (no
  /// reviewer configured; no terminal or `--no-prompt`) and otherwise must outlive it.
  Broker(BrokerOptions options, const Clock& clock, AuditSink& audit, Reviewer* reviewer,
         HumanPrompt* human);

  /// Decides `request` (docs/compatibility.md, "Approvals"):
  ///   1. validate() fails → deny, source `unavailable`, reason = the validation message;
  ///   2. find_hard_deny() matches → deny, source `hard-deny` (audit `hard_deny`; recorded
  ///      as a denial in the breaker; never asked);
  ///   3. the scope's breaker is tripped → deny, source `reviewer`, kCircuitBreakerReason;
  ///   4. reviewer (if any): error → deny, source `reviewer`,
  ///      `Automatic review is unavailable: <why>` (counts as a denial); deny → final
  ///      (source `reviewer`, reason = rationale); allow → allow (source `reviewer`);
  ///      defer → the human with the rationale as reason;
  ///   5. human (if any, and always when there is no reviewer): allow once → allow, source
  ///      `human`; deny → deny, source `human`; unavailable (or no human) → deny, source
  ///      `unavailable`;
  ///   6. every allow issues a grant and consumes it at once (compatibility C55); a failure
  ///      → deny, source `invalid-grant`, kInvalidGrantReason.
  /// Audit events in order: `hard_deny` | `review_decision`, then for an allow
  /// `grant_issued` and `grant_consumed` (or `grant_rejected`). If any audit line cannot be
  /// written the result is a deny, source `unavailable`, `The audit log could not be
  /// written: <error>` (fail closed: no unrecorded allow).
  [[nodiscard]] ApprovalResult approve(const BoundaryRequest& request,
                                       const ApprovalContext& context);

  /// Forgets the breaker state of one scope (e.g. when a turn ends).
  void clear_scope(std::string_view scope);

 private:
  struct Decision;
  [[nodiscard]] ApprovalResult review_and_ask(const BoundaryRequest& request,
                                              const ApprovalContext& context, Decision& decision);
  [[nodiscard]] ApprovalResult ask_human(const BoundaryRequest& request,
                                         const ApprovalContext& context, std::string reason);
  [[nodiscard]] ApprovalResult grant_once(const BoundaryRequest& request,
                                          const ApprovalContext& context, ApprovalResult allow,
                                          Decision& decision);
  void audit(AuditEvent event, const BoundaryRequest& request, const AuditDetails& details,
             Decision& decision);

  BrokerOptions options_;
  AuditSink& audit_;
  Reviewer* reviewer_;
  HumanPrompt* human_;
  std::mutex mutex_;  // guards breaker_ and grants_
  CircuitBreaker breaker_;
  GrantStore grants_;
};

}  // namespace pisandbox::approval
