// Unit tests of approval::Broker's answers that outlive one question (docs/approvals.md, "The
// order of a decision"):
// one decision for identical requests in flight, remembered answers per command and per session,
// the breaker and session answers shared through a ScopeLedger, the reply's source and reason,
// and the question's deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "approval/broker.hpp"
#include "approval_fixtures.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::json;
using testing::FakePrompt;
using testing::FakeReviewer;
using testing::FixedClock;
using testing::MemoryAudit;
using testing::network_request;
using testing::verdict;

/// A human who answers only when the test says so, and tells how many questions are open.
class GatedPrompt final : public HumanPrompt {
 public:
  HumanReply reply{HumanAnswer::AllowOnce, std::nullopt, {}};
  HumanReply ask(const HumanQuestion&) override {
    std::unique_lock lock(mutex_);
    ++asked_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
    return reply;
  }
  void wait_until_asked(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return asked_ >= n; });
  }
  void answer() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  int asked() {
    std::lock_guard lock(mutex_);
    return asked_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int asked_ = 0;
  bool open_ = false;
};

/// The network context of one command of `run` or `serve`.
ApprovalContext network_context(std::string scope = "scope-1") {
  return {"session-1", std::move(scope), "", true};
}

/// Counts the audit events named `event`.
std::size_t count(const std::vector<std::string>& events, const std::string& event) {
  return static_cast<std::size_t>(std::ranges::count(events, event));
}

/// Waits (yielding) until `broker` has `n` requests waiting for a decision in flight.
void wait_for_waiters(Broker& broker, std::size_t n) {
  while (broker.waiting() < n) std::this_thread::yield();
}

TEST(Coalescing, IdenticalRequestsInFlightShareOneQuestionAndEachGetsItsOwnGrant) {
  constexpr int kRequests = 8;
  SteadyClock clock;
  GatedPrompt prompt;
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  std::vector<ApprovalResult> results(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i)
    threads.emplace_back([&, i] {
      auto request = network_request();
      request.id = "sandbox-runtime-network-" + std::to_string(i);  // the id is not hashed
      results[i] = broker.approve(request, network_context());
    });
  prompt.wait_until_asked(1);
  wait_for_waiters(broker, kRequests - 1);
  prompt.answer();
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(prompt.asked(), 1);
  for (const auto& result : results)
    EXPECT_EQ(result,
              (ApprovalResult{Action::Allow, Source::Human, std::string(kHumanAllowReason)}));
  const auto events = audit.events();
  EXPECT_EQ(count(events, "review_decision"), 1u);
  EXPECT_EQ(count(events, "grant_issued"), static_cast<std::size_t>(kRequests));
  EXPECT_EQ(count(events, "grant_consumed"), static_cast<std::size_t>(kRequests));
  EXPECT_EQ(events.front(), "review_decision");
}

TEST(Coalescing, WaitersShareADenyAndTheBreakerCountsOneDecision) {
  constexpr int kRequests = 5;
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = verdict(ReviewOutcome::Defer, "Needs the user.");
  GatedPrompt prompt;
  prompt.reply = {HumanAnswer::Deny, Source::Reviewer, "Pi's broker said no."};
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, &reviewer, &prompt);
  std::vector<ApprovalResult> results(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i)
    threads.emplace_back([&, i] {
      results[i] = broker.approve(network_request(), {"s", "k", ""});
    });
  prompt.wait_until_asked(1);
  wait_for_waiters(broker, kRequests - 1);
  prompt.answer();
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(reviewer.calls, 1);
  for (const auto& result : results)
    EXPECT_EQ(result, (ApprovalResult{Action::Deny, Source::Reviewer, "Pi's broker said no.",
                                      AllowScope::Once, Recovery::Retry}));
  EXPECT_EQ(audit.events(), std::vector<std::string>{"review_decision"});
}

TEST(Coalescing, DifferentRequestsAreDecidedApart) {
  SteadyClock clock;
  FakePrompt prompt;
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  EXPECT_EQ(broker.approve(network_request("a.example:443"), network_context()).action,
            Action::Allow);
  EXPECT_EQ(broker.approve(network_request("b.example:443"), network_context()).action,
            Action::Allow);
  EXPECT_EQ(prompt.asked(), 2u);
}

TEST(Remembered, AllowForTheCommandAnswersLaterRequestsWithoutQuestionOrAuditLine) {
  SteadyClock clock;
  FakePrompt prompt;
  prompt.answer(HumanAnswer::AllowForCommand);
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  const ApprovalResult allowed{Action::Allow, Source::Human,
                               std::string(kHumanAllowForCommandReason), AllowScope::Command};
  EXPECT_EQ(broker.approve(network_request(), network_context()), allowed);
  const auto audited = audit.events();
  EXPECT_EQ(audited,
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed"}));
  prompt.answer(HumanAnswer::Deny);  // never asked again
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(broker.approve(network_request(), network_context()), allowed);
  EXPECT_EQ(prompt.asked(), 1u);
  EXPECT_EQ(audit.events(), audited);
  // Another destination is asked about.
  EXPECT_EQ(broker.approve(network_request("other.example:443"), network_context()).action,
            Action::Deny);
  EXPECT_EQ(prompt.asked(), 2u);
}

// A credential's answer is remembered for its host apart from the host's connections
// (docs/network.md, "Credentials for HTTPS"): allowing the connection gives no credential, and
// the other way round; its choices name the credential.
TEST(Remembered, ACredentialIsRememberedApartFromItsHostsConnections) {
  SteadyClock clock;
  FakePrompt prompt;
  prompt.answer(HumanAnswer::AllowForCommand);
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  auto credential = network_request("git.example:443");
  credential.surface = Surface::Credential;
  credential.operation = "git-credential";
  EXPECT_EQ(broker.approve(network_request("git.example:443"), network_context()).action,
            Action::Allow);
  EXPECT_EQ(prompt.asked(), 1u);
  prompt.answer(HumanAnswer::Deny);
  EXPECT_EQ(broker.approve(credential, network_context()).action, Action::Deny);
  EXPECT_EQ(prompt.asked(), 2u);
  // Each answer holds for its own kind: the connection stays allowed, the credential denied.
  EXPECT_EQ(broker.approve(network_request("git.example:443"), network_context()).action,
            Action::Allow);
  EXPECT_EQ(broker.approve(credential, network_context()).source, Source::Human);
  EXPECT_EQ(prompt.asked(), 2u);
  const HumanQuestion question{credential, "", "", true, std::nullopt};
  std::vector<std::string> labels;
  for (const auto& choice : question_choices(question)) labels.push_back(choice.label);
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "Deny", "Allow this exact operation once",
                        "Allow the credential for git.example:443 for the rest of this command",
                        "Allow the credential for git.example:443 for this session"}));
}

TEST(Remembered, AHumanDenyAnswersLaterRequestsOfTheCommand) {
  SteadyClock clock;
  FakePrompt prompt;
  prompt.reply = {HumanAnswer::Deny, std::nullopt, "Not now."};
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  EXPECT_EQ(broker.approve(network_request(), network_context()),
            (ApprovalResult{Action::Deny, Source::Human, "Not now."}));
  prompt.answer(HumanAnswer::AllowOnce);
  // The same deny, with its reason: the answer is known, nobody is asked again.
  EXPECT_EQ(broker.approve(network_request(), network_context()),
            (ApprovalResult{Action::Deny, Source::Human, "Not now."}));
  EXPECT_EQ(prompt.asked(), 1u);
  EXPECT_EQ(audit.events(), std::vector<std::string>{"review_decision"});
}

TEST(Remembered, NobodyAnsweringAndOtherSourcesAreNotRemembered) {
  SteadyClock clock;
  FakePrompt prompt;
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  prompt.answer(HumanAnswer::Unavailable);
  EXPECT_EQ(broker.approve(network_request(), network_context()).source, Source::Unavailable);
  prompt.answer(HumanAnswer::AllowOnce);  // allow once is not remembered either
  EXPECT_EQ(broker.approve(network_request(), network_context()).action, Action::Allow);
  EXPECT_EQ(broker.approve(network_request(), network_context()).action, Action::Allow);
  // A reviewer's deny given through the host (Pi's broker) is a verdict: remembered.
  prompt.reply = {HumanAnswer::Deny, Source::Reviewer, "Pi's reviewer said no."};
  EXPECT_EQ(broker.approve(network_request(), network_context()),
            (ApprovalResult{Action::Deny, Source::Reviewer, "Pi's reviewer said no."}));
  prompt.answer(HumanAnswer::AllowOnce);
  EXPECT_EQ(broker.approve(network_request(), network_context()),
            (ApprovalResult{Action::Deny, Source::Reviewer, "Pi's reviewer said no."}));
  EXPECT_EQ(prompt.asked(), 4u);
}

TEST(Remembered, TheReviewersDenyIsNotAskedAgainAndDoesNotTripTheBreakerOnRetries) {
  // Retries of one refused host must not trip the breaker for every other destination of the
  // scope.
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = verdict(ReviewOutcome::Deny, "no.");
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, &reviewer, nullptr);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(
        broker.approve(network_request(), network_context()),
        (ApprovalResult{Action::Deny, Source::Reviewer, "no.", AllowScope::Once, Recovery::Retry}));
  EXPECT_EQ(reviewer.calls, 1);
  reviewer.answer = verdict(ReviewOutcome::Allow, "fine.");
  BoundaryRequest other = network_request();
  other.destination = "other.example:443";
  EXPECT_EQ(broker.approve(other, network_context()).action, Action::Allow);
}

TEST(Remembered, TheReviewersAllowHoldsForTheRestOfTheCommandOnlyForItsDestination) {
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = verdict(ReviewOutcome::Allow, "fine.");
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, &reviewer, nullptr);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(broker.approve(network_request(), network_context()),
              (ApprovalResult{Action::Allow, Source::Reviewer, "fine.", AllowScope::Command}));
  EXPECT_EQ(reviewer.calls, 1);
  EXPECT_EQ(audit.events(),
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed"}));
  EXPECT_EQ(json::parse(audit.lines.at(1)).at("reason"), "valid for the rest of this command");
  // Another destination is reviewed on its own; so is a request of another broker (command).
  BoundaryRequest other = network_request();
  other.destination = "other.example:443";
  EXPECT_EQ(broker.approve(other, network_context()).action, Action::Allow);
  EXPECT_EQ(reviewer.calls, 2);
  Broker next(BrokerOptions{}, clock, audit, &reviewer, nullptr);
  EXPECT_EQ(next.approve(network_request(), network_context()).action, Action::Allow);
  EXPECT_EQ(reviewer.calls, 3);
  // Without offer_remembered (a host-IPC run, `approvals check`): once.
  ApprovalContext once = network_context();
  once.offer_remembered = false;
  EXPECT_EQ(next.approve(other, once),
            (ApprovalResult{Action::Allow, Source::Reviewer, "fine.", AllowScope::Once}));
  EXPECT_EQ(next.approve(other, once).action, Action::Allow);
  EXPECT_EQ(reviewer.calls, 5);
}

TEST(Remembered, AFailedReviewAndTheBreakersDenyAreNotRemembered) {
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = std::unexpected(std::string("reviewer exited with status 3"));
  MemoryAudit audit;
  BrokerOptions options;
  options.breaker.consecutive_denials = 2;
  Broker broker(options, clock, audit, &reviewer, nullptr);
  EXPECT_EQ(broker.approve(network_request(), network_context()).reason,
            "Automatic review is unavailable.");
  EXPECT_EQ(broker.approve(network_request(), network_context()).reason,
            "Automatic review is unavailable.");
  EXPECT_EQ(reviewer.calls, 6);  // each review tried again twice
  // Tripped now: the breaker's deny is not a verdict on the destination either.
  EXPECT_EQ(broker.approve(network_request(), network_context()).reason, kCircuitBreakerReason);
  EXPECT_EQ(broker.approve(network_request(), network_context()).reason, kCircuitBreakerReason);
  EXPECT_EQ(reviewer.calls, 6);
}

TEST(Remembered, HardDenyComesBeforeARememberedAllow) {
  SteadyClock clock;
  FakePrompt prompt;
  prompt.answer(HumanAnswer::AllowForSession);
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  EXPECT_EQ(broker.approve(network_request(), network_context()).scope, AllowScope::Session);
  auto weakened = network_request();
  weakened.command = "curl -k https://example.com";
  EXPECT_EQ(broker.approve(weakened, network_context()).source, Source::HardDeny);
}

TEST(Remembered, ARememberedAllowPassesATrippedBreaker) {
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = verdict(ReviewOutcome::Defer, "Needs the user.");
  FakePrompt prompt;
  prompt.answer(HumanAnswer::AllowForCommand);
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, &reviewer, &prompt);
  EXPECT_EQ(broker.approve(network_request(), network_context()).action, Action::Allow);
  reviewer.answer = verdict(ReviewOutcome::Deny, "no");
  for (const char* host : {"a.example:443", "b.example:443", "c.example:443"})
    EXPECT_EQ(broker.approve(network_request(host), network_context()).reason, "no");
  EXPECT_EQ(broker.approve(network_request("d.example:443"), network_context()).reason,
            kCircuitBreakerReason);
  // The order (docs/approvals.md, "The order of a decision"): remembered answers come before
  // the breaker.
  EXPECT_EQ(broker.approve(network_request(), network_context()).action, Action::Allow);
}

TEST(ScopeSharing, ASessionAnswerCoversEveryBrokerOfTheLedger) {
  SteadyClock clock;
  auto ledger = std::make_shared<LocalLedger>();
  FakePrompt first_prompt, second_prompt;
  first_prompt.answer(HumanAnswer::AllowForSession);
  second_prompt.answer(HumanAnswer::Deny);
  MemoryAudit audit;
  BrokerOptions options;
  options.ledger = ledger;
  Broker first(options, clock, audit, nullptr, &first_prompt);
  Broker second(options, clock, audit, nullptr, &second_prompt);
  const ApprovalResult session{Action::Allow, Source::Human,
                               std::string(kHumanAllowForSessionReason), AllowScope::Session};
  EXPECT_EQ(first.approve(network_request(), network_context()), session);
  EXPECT_TRUE(ledger->allowed_for_session("example.com:443"));
  EXPECT_EQ(json::parse(audit.lines.at(1)).at("reason"), "valid for this session");
  // Another command of the session (another command line, another scope): no question.
  auto other = network_request();
  other.command = "npm install left-pad";
  EXPECT_EQ(second.approve(other, network_context("scope-2")), session);
  EXPECT_EQ(second_prompt.asked(), 0u);
  EXPECT_EQ(audit.events().size(), 3u);  // the first decision's lines only
}

TEST(ScopeSharing, TwoBrokersOnOneLedgerTripTogether) {
  SteadyClock clock;
  auto ledger = std::make_shared<LocalLedger>();
  FakeReviewer reviewer;
  reviewer.answer = verdict(ReviewOutcome::Deny, "no");
  MemoryAudit audit;
  BrokerOptions options;
  options.ledger = ledger;
  Broker first(options, clock, audit, &reviewer, nullptr);
  Broker second(options, clock, audit, &reviewer, nullptr);
  EXPECT_EQ(first.approve(network_request("a.example:443"), network_context()).reason, "no");
  EXPECT_EQ(second.approve(network_request("b.example:443"), network_context()).reason, "no");
  EXPECT_EQ(first.approve(network_request("c.example:443"), network_context()).reason, "no");
  EXPECT_EQ(reviewer.calls, 3);
  EXPECT_TRUE(ledger->tripped("scope-1"));
  EXPECT_EQ(second.approve(network_request("d.example:443"), network_context()).reason,
            kCircuitBreakerReason);
  EXPECT_EQ(reviewer.calls, 3);
  // Another scope of the same ledger is not tripped.
  EXPECT_EQ(second.approve(network_request("d.example:443"), network_context("scope-2")).reason,
            "no");
  first.clear_scope("scope-1");
  EXPECT_FALSE(ledger->tripped("scope-1"));
}

TEST(ScopeSharing, ASessionAllowGivenMeanwhileIsNotAskedAgain) {
  // The reviewer defers; while it looked, another command allowed the destination for the
  // session: the human is not asked.
  SteadyClock clock;
  auto ledger = std::make_shared<LocalLedger>();
  class AllowingReviewer final : public Reviewer {
   public:
    explicit AllowingReviewer(LocalLedger& ledger) : ledger_(ledger) {}
    std::expected<ReviewerVerdict, std::string> review(const BoundaryRequest& r,
                                                       const ReviewEvidence&) override {
      ledger_.allow_for_session(*r.destination);
      return verdict(ReviewOutcome::Defer, "Needs the user.");
    }

   private:
    LocalLedger& ledger_;
  } reviewer(*ledger);
  FakePrompt prompt;
  MemoryAudit audit;
  BrokerOptions options;
  options.ledger = ledger;
  Broker broker(options, clock, audit, &reviewer, &prompt);
  EXPECT_EQ(broker.approve(network_request(), network_context()).scope, AllowScope::Session);
  EXPECT_EQ(prompt.asked(), 0u);
}

TEST(Replies, SourceAndReasonReachTheResult) {
  SteadyClock clock;
  FakePrompt prompt;
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  const auto with = [&](HumanReply reply) {
    prompt.reply = std::move(reply);
    return broker.approve(network_request(), {"s", "k", ""});
  };
  EXPECT_EQ(with({HumanAnswer::Deny, std::nullopt, {}}),
            (ApprovalResult{Action::Deny, Source::Human, "Denied by the user."}));
  EXPECT_EQ(with({HumanAnswer::Deny, Source::Unavailable, {}}),
            (ApprovalResult{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)}));
  EXPECT_EQ(with({HumanAnswer::Deny, Source::Unavailable, "Pi runs without a UI."}),
            (ApprovalResult{Action::Deny, Source::Unavailable, "Pi runs without a UI."}));
  EXPECT_EQ(with({HumanAnswer::Deny, Source::Reviewer, "Exfiltration risk."}),
            (ApprovalResult{Action::Deny, Source::Reviewer, "Exfiltration risk."}));
  EXPECT_EQ(with({HumanAnswer::Deny, Source::Reviewer, {}}),
            (ApprovalResult{Action::Deny, Source::Reviewer, "Denied by the automatic reviewer."}));
  EXPECT_EQ(
      with({HumanAnswer::Unavailable, std::nullopt, "Nobody answered the question within 5 s."}),
      (ApprovalResult{Action::Deny, Source::Unavailable,
                      "Nobody answered the question within 5 s."}));
  EXPECT_EQ(with({HumanAnswer::AllowOnce, Source::Reviewer, "Known registry."}),
            (ApprovalResult{Action::Allow, Source::Reviewer, "Known registry."}));
  // Only a person or a reviewer may allow.
  EXPECT_EQ(with({HumanAnswer::AllowOnce, Source::HardDeny, {}}),
            (ApprovalResult{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)}));
  EXPECT_EQ(unanswered_reason(std::chrono::seconds(120)),
            "Nobody answered the question within 120 s.");
}

TEST(Deadlines, TheQuestionGetsItsOwnTimeoutOrTheCommandsEndWhicheverIsFirst) {
  FixedClock clock;
  FakePrompt prompt;
  MemoryAudit audit;
  const auto ask_with = [&](std::chrono::seconds timeout,
                            std::optional<std::chrono::steady_clock::time_point> command_end) {
    BrokerOptions options;
    options.question_timeout = timeout;
    options.command_deadline = command_end;
    Broker broker(std::move(options), clock, audit, nullptr, &prompt);
    (void)broker.approve(network_request(), {"s", "k", ""});
    return prompt.deadlines.back();
  };
  using std::chrono::seconds;
  EXPECT_EQ(ask_with(seconds(0), std::nullopt), std::nullopt);
  EXPECT_EQ(ask_with(seconds(120), std::nullopt), clock.at + seconds(120));
  EXPECT_EQ(ask_with(seconds(0), clock.at + seconds(30)), clock.at + seconds(30));
  EXPECT_EQ(ask_with(seconds(120), clock.at + seconds(30)), clock.at + seconds(30));
  EXPECT_EQ(ask_with(seconds(20), clock.at + seconds(30)), clock.at + seconds(20));
}

}  // namespace
}  // namespace pisandbox::approval
