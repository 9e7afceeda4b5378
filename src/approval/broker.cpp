#include "approval/broker.hpp"

#include <utility>

namespace pisandbox::approval {

// What one approve() call has learnt so far: the first audit failure, if any.
struct Broker::Decision {
  std::string audit_error;
};

Broker::Broker(BrokerOptions options, const Clock& clock, AuditSink& audit, Reviewer* reviewer,
               HumanPrompt* human)
    : options_(std::move(options)),
      audit_(audit),
      reviewer_(reviewer),
      human_(human),
      breaker_(options_.breaker),
      grants_(clock, options_.grant_ttl) {}

ApprovalResult Broker::approve(const BoundaryRequest& request, const ApprovalContext& context) {
  Decision decision;
  ApprovalResult result;
  if (auto valid = validate(request); !valid) {
    result = {Action::Deny, Source::Unavailable, valid.error().message};
    audit(AuditEvent::ReviewDecision, request, details_of(result), decision);
  } else if (auto hard = find_hard_deny(request, options_.hard_deny)) {
    // Compatibility C71: a hard deny counts as a denial, so repeated attempts trip the breaker.
    {
      std::lock_guard lock(mutex_);
      breaker_.record(context.scope_key, ReviewOutcome::Deny);
    }
    result = {Action::Deny, Source::HardDeny, hard->reason};
    audit(AuditEvent::HardDeny, request, details_of(result), decision);
  } else {
    result = review_and_ask(request, context, decision);
  }
  if (!decision.audit_error.empty())
    return {Action::Deny, Source::Unavailable,
            std::string(kAuditUnavailablePrefix) + decision.audit_error};
  return result;
}

ApprovalResult Broker::review_and_ask(const BoundaryRequest& request,
                                      const ApprovalContext& context, Decision& decision) {
  bool tripped = false;
  {
    std::lock_guard lock(mutex_);
    tripped = breaker_.tripped(context.scope_key);
  }
  ApprovalResult result;
  if (tripped) {
    // Compatibility C53: a circuit-breaker deny is the reviewer's and no human may override it.
    result = {Action::Deny, Source::Reviewer, std::string(kCircuitBreakerReason)};
  } else if (reviewer_ == nullptr) {
    result = ask_human(request, context, {});
  } else {
    auto verdict = reviewer_->review(request);
    const ReviewOutcome outcome = verdict ? verdict->outcome : ReviewOutcome::Deny;
    {
      std::lock_guard lock(mutex_);
      breaker_.record(context.scope_key, outcome);  // Compatibility C72: a failure is a denial
    }
    if (!verdict)
      result = {Action::Deny, Source::Reviewer, review_unavailable_reason(verdict.error())};
    else if (outcome == ReviewOutcome::Defer)
      result = ask_human(request, context, verdict->rationale);
    else
      result = {outcome == ReviewOutcome::Allow ? Action::Allow : Action::Deny, Source::Reviewer,
                verdict->rationale};
  }
  audit(AuditEvent::ReviewDecision, request, details_of(result), decision);
  if (result.action == Action::Allow) result = grant_once(request, context, result, decision);
  return result;
}

ApprovalResult Broker::ask_human(const BoundaryRequest& request, const ApprovalContext& context,
                                 std::string reason) {
  if (human_ == nullptr) return {Action::Deny, Source::Unavailable, std::string(kNoHumanReason)};
  switch (human_->ask(HumanQuestion{request, context.warning, std::move(reason),
                                    context.offer_for_command && request.destination})) {
    case HumanAnswer::AllowOnce:
      return {Action::Allow, Source::Human, std::string(kHumanAllowReason)};
    case HumanAnswer::AllowForCommand:
      if (!context.offer_for_command || !request.destination) break;
      return {Action::Allow, Source::Human, std::string(kHumanAllowForCommandReason), true};
    case HumanAnswer::Deny:
      return {Action::Deny, Source::Human, std::string(kHumanDenyReason)};
    case HumanAnswer::Unavailable:
      break;
  }
  return {Action::Deny, Source::Unavailable, std::string(kNoHumanReason)};
}

ApprovalResult Broker::grant_once(const BoundaryRequest& request, const ApprovalContext& context,
                                  ApprovalResult allow, Decision& decision) {
  // Compatibility C55, C73: the grant binds the allow to this exact request and session; issuing
  // and consuming it here adds the binding and the audit trail, not a delay.
  const ApprovalResult invalid{Action::Deny, Source::InvalidGrant,
                               std::string(kInvalidGrantReason)};
  const AuditDetails broker_details{std::nullopt, "broker", {}};
  bool consumed = false;
  core::Result<Grant> grant;
  {
    std::lock_guard lock(mutex_);
    grant = grants_.issue(request, context.session_id);
    if (grant) consumed = grants_.consume(request, context.session_id, grant->token);
  }
  if (!grant) {
    audit(AuditEvent::GrantRejected, request, {Action::Deny, "broker", grant.error().message},
          decision);
    return invalid;
  }
  // A grant for the rest of the command says so in its audit line (docs/network.md, "Deciding a
  // destination").
  audit(AuditEvent::GrantIssued, request,
        allow.for_command
            ? AuditDetails{std::nullopt, "broker", "valid for the rest of this command"}
            : broker_details,
        decision);
  if (!consumed) {
    audit(AuditEvent::GrantRejected, request, details_of(invalid), decision);
    return invalid;
  }
  audit(AuditEvent::GrantConsumed, request, broker_details, decision);
  return allow;
}

void Broker::audit(AuditEvent event, const BoundaryRequest& request, const AuditDetails& details,
                   Decision& decision) {
  auto written = audit_.append(audit_line(event, request, details, options_.wall_clock()));
  if (!written && decision.audit_error.empty()) decision.audit_error = written.error().message;
}

void Broker::clear_scope(std::string_view scope) {
  std::lock_guard lock(mutex_);
  breaker_.clear(scope);
}

}  // namespace pisandbox::approval
