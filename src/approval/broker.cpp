#include "approval/broker.hpp"

#include <condition_variable>
#include <utility>

#include "core/printable.hpp"

namespace pisandbox::approval {

namespace {

/// The result of a human's reply. `offered`: allow-command and allow-session were offered.
ApprovalResult from_reply(const HumanReply& reply, bool offered) {
  const Source who = reply.source.value_or(Source::Human);
  const auto reason = [&reply](std::string_view fallback) {
    return reply.reason.empty() ? std::string(fallback) : reply.reason;
  };
  switch (reply.answer) {
    case HumanAnswer::AllowOnce:
    case HumanAnswer::AllowForCommand:
    case HumanAnswer::AllowForSession: {
      // Only a person or a reviewer may allow (docs/protocol.md, `approval_response`); an
      // answer that was not offered is no answer.
      if (who != Source::Human && who != Source::Reviewer) break;
      if (reply.answer == HumanAnswer::AllowOnce)
        return {Action::Allow, who, reason(kHumanAllowReason)};
      if (!offered) break;
      if (reply.answer == HumanAnswer::AllowForCommand)
        return {Action::Allow, who, reason(kHumanAllowForCommandReason), AllowScope::Command};
      return {Action::Allow, who, reason(kHumanAllowForSessionReason), AllowScope::Session};
    }
    case HumanAnswer::Deny:
      return {Action::Deny, who, reason(default_deny_reason(who))};
    case HumanAnswer::Unavailable:
      return {Action::Deny, Source::Unavailable, reason(kNoHumanReason)};
  }
  return {Action::Deny, Source::Unavailable, std::string(kNoHumanReason)};
}

/// The key a remembered answer is kept under: a network request's destination, and for a
/// credential the destination after `credential ` (an allowed connection to a host gives no
/// credential for it, nor the other way round: docs/network.md, "Credentials for HTTPS"). Other
/// requests are never remembered.
std::optional<std::string> remembered_key(const BoundaryRequest& request) {
  if (!request.destination) return std::nullopt;
  if (request.surface == Surface::Network) return *request.destination;
  if (request.surface == Surface::Credential) return "credential " + *request.destination;
  return std::nullopt;
}

/// How long a reviewer's verdict holds: its allow of a network destination holds for the rest
/// of the command, as a person's `Allow <destination> for the rest of this command` does
/// (docs/approvals.md, step 5): one review for a tool's many connections to one host. Every
/// other allow is for the request alone.
AllowScope reviewer_allow_scope(const BoundaryRequest& request, const ApprovalContext& context,
                                ReviewOutcome outcome) {
  const bool remembered = context.offer_remembered && remembered_key(request).has_value();
  return outcome == ReviewOutcome::Allow && remembered ? AllowScope::Command : AllowScope::Once;
}

}  // namespace

std::vector<QuestionChoice> question_choices(const HumanQuestion& question) {
  std::vector<QuestionChoice> out = {
      {HumanAnswer::Deny, "deny", "Deny"},
      {HumanAnswer::AllowOnce, "allow-once", "Allow this exact operation once"},
  };
  if (question.offer_remembered && question.request.destination) {
    // A credential's choices say what is given, so that they never read as a connection's.
    const std::string destination =
        (question.request.surface == Surface::Credential ? "the credential for " : "") +
        core::printable(*question.request.destination);
    out.push_back({HumanAnswer::AllowForCommand, "allow-command",
                   "Allow " + destination + " for the rest of this command"});
    out.push_back({HumanAnswer::AllowForSession, "allow-session",
                   "Allow " + destination + " for this session"});
  }
  return out;
}

std::string unanswered_reason(std::chrono::seconds waited) {
  return "Nobody answered the question within " + std::to_string(waited.count()) + " s.";
}

std::string default_deny_reason(Source source) {
  switch (source) {
    case Source::Human:
      return std::string(kHumanDenyReason);
    case Source::Unavailable:
      return std::string(kNoHumanReason);
    case Source::InvalidGrant:
      return std::string(kInvalidGrantReason);
    case Source::Reviewer:
      return "Denied by the automatic reviewer.";
    case Source::HardDeny:
      return "Denied by a hard-deny rule.";
  }
  return std::string(kNoHumanReason);
}

// What one approve() call has learnt so far: the first audit failure, if any.
struct Broker::Decision {
  std::string audit_error;
};

// One decision in flight, shared by every identical request that arrives meanwhile.
struct Broker::InFlight {
  std::condition_variable done_cv;  // waited on with Broker::mutex_
  std::size_t waiting = 0;
  bool done = false;
  ApprovalResult result;  // before the grant: each allowed waiter takes its own
};

Broker::Broker(BrokerOptions options, const Clock& clock, AuditSink& audit, Reviewer* reviewer,
               HumanPrompt* human)
    : options_(std::move(options)),
      clock_(clock),
      audit_(audit),
      reviewer_(reviewer),
      human_(human),
      ledger_(options_.ledger ? options_.ledger : std::make_shared<LocalLedger>(options_.breaker)),
      grants_(clock, options_.grant_ttl) {}

ApprovalResult Broker::approve(const BoundaryRequest& request, const ApprovalContext& context) {
  struct Active {
    Broker& broker;
    explicit Active(Broker& b) : broker(b) {
      std::lock_guard lock(broker.mutex_);
      ++broker.active_;
    }
    ~Active() {
      std::lock_guard lock(broker.mutex_);
      if (--broker.active_ == 0) broker.idle_cv_.notify_all();
    }
    Active(const Active&) = delete;
    Active& operator=(const Active&) = delete;
  } active(*this);
  Decision decision;
  ApprovalResult result;
  if (auto valid = validate(request); !valid) {
    result = {Action::Deny, Source::Unavailable, valid.error().message};
    audit(AuditEvent::ReviewDecision, request, details_of(result), decision);
  } else if (auto hard = find_hard_deny(request, options_.hard_deny)) {
    // Compatibility C71: a hard deny counts as a denial, so repeated attempts trip the breaker.
    ledger_->record(context.scope_key, ReviewOutcome::Deny);
    result = {Action::Deny, Source::HardDeny, hard->reason};
    audit(AuditEvent::HardDeny, request, details_of(result), decision);
  } else {
    result = decide(request, context, decision);
  }
  if (!decision.audit_error.empty())
    return {Action::Deny, Source::Unavailable,
            std::string(kAuditUnavailablePrefix) + decision.audit_error};
  return result;
}

std::optional<ApprovalResult> Broker::remembered(const BoundaryRequest& request) {
  const auto destination = remembered_key(request);
  if (!destination) return std::nullopt;
  const auto it = remembered_.find(*destination);  // the caller holds mutex_
  if (it == remembered_.end()) return std::nullopt;
  return it->second;
}

ApprovalResult Broker::decide(const BoundaryRequest& request, const ApprovalContext& context,
                              Decision& decision) {
  {
    std::lock_guard lock(mutex_);
    if (auto known = remembered(request)) return *known;
  }
  // Another command of the session may have allowed the destination (docs/approvals.md, "The
  // question and its answers": `allow-session`).
  if (const auto destination = remembered_key(request);
      destination && ledger_->allowed_for_session(*destination))
    return {Action::Allow, Source::Human, std::string(kHumanAllowForSessionReason),
            AllowScope::Session};

  std::string key;
  if (auto hash = request_hash(request)) key = context.session_id + "\n" + *hash;
  std::shared_ptr<InFlight> flight;
  {
    std::unique_lock lock(mutex_);
    // Checked again under the lock that a finishing decision publishes under, so a request
    // never misses both the answer and the decision in flight.
    if (auto known = remembered(request)) return *known;
    if (!key.empty()) {
      if (const auto it = in_flight_.find(key); it != in_flight_.end()) {
        const std::shared_ptr<InFlight> shared = it->second;
        ++shared->waiting;
        shared->done_cv.wait(lock, [&shared] { return shared->done; });
        --shared->waiting;
        ApprovalResult result = shared->result;
        lock.unlock();
        if (result.action != Action::Allow) return result;
        return grant_once(request, context, std::move(result), decision);
      }
      flight = std::make_shared<InFlight>();
      in_flight_.emplace(key, flight);
    }
  }

  // This request leads: its decision is the one the waiters share. Whatever happens, they
  // are released (an exception counts as nobody answering).
  ApprovalResult result{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)};
  const auto publish = [&] {
    std::lock_guard lock(mutex_);
    if (flight) {
      flight->result = result;
      flight->done = true;
      in_flight_.erase(key);
      flight->done_cv.notify_all();
    }
  };
  try {
    result = review_and_ask(request, context, decision);
    remember(request, context, result);
  } catch (...) {
    result = {Action::Deny, Source::Unavailable, std::string(kNoHumanReason)};
    publish();
    throw;
  }
  publish();
  if (result.action != Action::Allow) return result;
  return grant_once(request, context, std::move(result), decision);
}

void Broker::remember(const BoundaryRequest& request, const ApprovalContext& context,
                      const ApprovalResult& result) {
  const auto destination = remembered_key(request);
  if (!destination || !context.offer_remembered) return;
  // What is answered again without asking: an allow for the command or the session, a
  // person's deny, and the reviewer's own verdict to deny (its retries would otherwise ask it
  // again and trip the breaker for every other destination of the scope). Not remembered: a
  // review that failed, and the breaker's deny (neither is a verdict on this destination).
  const bool reviewer_verdict = result.source == Source::Reviewer &&
                                result.reason != kCircuitBreakerReason &&
                                result.reason != kReviewUnavailableReason;
  const bool remembered =
      (result.action == Action::Allow && result.scope != AllowScope::Once) ||
      (result.action == Action::Deny && (result.source == Source::Human || reviewer_verdict));
  if (!remembered) return;
  // The session's answer first, so that other commands see it as soon as this one does.
  if (result.action == Action::Allow && result.scope == AllowScope::Session)
    ledger_->allow_for_session(*destination);
  std::lock_guard lock(mutex_);
  remembered_[*destination] = result;
}

ApprovalResult Broker::review_and_ask(const BoundaryRequest& request,
                                      const ApprovalContext& context, Decision& decision) {
  ApprovalResult result;
  const auto hash = request_hash(request);
  bool retry = false;
  if (reviewer_ != nullptr && hash) {
    if (ledger_->take_override(*hash, context.scope_key, Recovery::BreakGlass)) {
      result = {Action::Allow, Source::Human, std::string(kBreakGlassReason)};
      audit(AuditEvent::ReviewDecision, request, details_of(result), decision);
      return result;
    }
    retry = ledger_->take_override(*hash, context.scope_key, Recovery::Retry);
  }
  std::optional<AuditDetails> failure;
  if (!retry && ledger_->tripped(context.scope_key)) {
    // Compatibility C53: a circuit-breaker deny is the reviewer's and no human may override it.
    result = {Action::Deny, Source::Reviewer, std::string(kCircuitBreakerReason)};
    // `/auto-review-approve` passes the breaker; without a reviewer there is nothing to retry.
    if (reviewer_ != nullptr) note_denial(request, context, result, Recovery::Retry);
  } else if (reviewer_ == nullptr) {
    result = ask_human(request, context, {});
  } else {
    auto verdict = review(request, ReviewEvidence{retry});
    const bool defer_failure = options_.reviewer_failure == ReviewerFailureMode::Defer;
    const ReviewOutcome outcome = verdict         ? verdict->outcome
                                  : defer_failure ? ReviewOutcome::Defer
                                                  : ReviewOutcome::Deny;
    ledger_->record(context.scope_key, outcome);  // Compatibility C72: a failure is a denial
    if (!verdict && !defer_failure)
      result = {Action::Deny, Source::Reviewer, std::string(kReviewUnavailableReason)};
    else if (outcome == ReviewOutcome::Defer)
      result = ask_human(request, context,
                         verdict ? verdict->rationale : std::string(kReviewUnavailableReason));
    else
      result = {outcome == ReviewOutcome::Allow ? Action::Allow : Action::Deny, Source::Reviewer,
                verdict->rationale, reviewer_allow_scope(request, context, outcome)};
    if (result.action == Action::Deny && result.source == Source::Reviewer) {
      const bool critical = verdict && verdict->risk_level == RiskLevel::Critical;
      note_denial(request, context, result, critical ? Recovery::BreakGlass : Recovery::Retry);
    }
    if (!verdict && result.reason == kReviewUnavailableReason) {
      // The log says what failed; the result (which the agent sees) never does.
      failure = details_of(result);
      failure->reason = review_unavailable_reason(verdict.error());
    }
  }
  audit(AuditEvent::ReviewDecision, request, failure ? *failure : details_of(result), decision);
  return result;
}

std::expected<ReviewerVerdict, std::string> Broker::review(const BoundaryRequest& request,
                                                           const ReviewEvidence& evidence) {
  auto verdict = reviewer_->review(request, evidence);
  for (int retry = 0; !verdict && retry < options_.reviewer_retries; ++retry)
    verdict = reviewer_->review(request, evidence);
  return verdict;
}

void Broker::note_denial(const BoundaryRequest& request, const ApprovalContext& context,
                         ApprovalResult& result, Recovery recovery) {
  auto hash = request_hash(request);
  if (!hash) return;
  result.recovery = recovery;
  const std::string target = request.destination ? *request.destination
                             : request.command   ? *request.command
                             : request.path      ? *request.path
                                                 : std::string();
  ledger_->note_denial(RecentDenial{*hash, context.scope_key, recovery,
                                    std::string(to_string(request.surface)), target, result.reason,
                                    request.command.value_or("")});
}

ApprovalResult Broker::ask_human(const BoundaryRequest& request, const ApprovalContext& context,
                                 std::string reason) {
  if (human_ == nullptr) return {Action::Deny, Source::Unavailable, std::string(kNoHumanReason)};
  const auto key = remembered_key(request);
  const bool offer = context.offer_remembered && key.has_value();
  // Allowed for the session while the reviewer looked at it: no question whose answer is known.
  if (offer && ledger_->allowed_for_session(*key))
    return {Action::Allow, Source::Human, std::string(kHumanAllowForSessionReason),
            AllowScope::Session};
  std::optional<std::chrono::steady_clock::time_point> deadline = options_.command_deadline;
  if (options_.question_timeout.count() > 0) {
    const auto own = clock_.now() + options_.question_timeout;
    if (!deadline || own < *deadline) deadline = own;
  }
  return from_reply(
      human_->ask(HumanQuestion{request, context.warning, std::move(reason), offer, deadline}),
      offer);
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
  // A grant that also covers later requests says so in its audit line (docs/network.md,
  // "Deciding a destination").
  AuditDetails issued = broker_details;
  if (allow.scope == AllowScope::Command) issued.reason = "valid for the rest of this command";
  if (allow.scope == AllowScope::Session) issued.reason = "valid for this session";
  audit(AuditEvent::GrantIssued, request, issued, decision);
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

std::size_t Broker::waiting() {
  std::lock_guard lock(mutex_);
  std::size_t count = 0;
  for (const auto& [key, flight] : in_flight_) count += flight->waiting;
  return count;
}

bool Broker::wait_idle(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  return idle_cv_.wait_for(lock, limit, [this] { return active_ == 0; });
}

void Broker::clear_scope(std::string_view scope) {
  ledger_->clear(scope);
}

}  // namespace pisandbox::approval
