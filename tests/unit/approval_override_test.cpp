// Unit tests of the way out after a wrong automatic denial (docs/approvals.md, "After a wrong
// denial"): the session's ledger of recent denials and overrides (approval::LocalLedger), and
// the broker's order with them (a break-glass allow skips review but not the hard denies and
// still gets its grant; a retry is reviewed again with the user's word as evidence).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "approval/broker.hpp"
#include "approval/ledger.hpp"
#include "approval_fixtures.hpp"

namespace pisandbox::approval {
namespace {

using testing::FakePrompt;
using testing::FakeReviewer;
using testing::MemoryAudit;
using testing::network_request;
using testing::verdict;

using std::chrono::seconds;
using Time = std::chrono::steady_clock::time_point;

/// A LocalLedger on a clock the test moves.
struct ClockedLedger {
  Time at{std::chrono::hours(1000)};
  std::shared_ptr<LocalLedger> ledger =
      std::make_shared<LocalLedger>(CircuitBreakerLimits{}, [this] { return at; });
};

RecentDenial denial(std::string hash, Recovery recovery, std::string scope = "turn-1") {
  return {std::move(hash), std::move(scope), recovery, "network", "example.com:443", "No."};
}

const std::string kHashA(64, 'a');
const std::string kHashB(64, 'b');

TEST(OverrideLedger, ARetryIsUsableOnceWithinSixtySecondsAndOncePerSessionAndHash) {
  ClockedLedger c;
  c.ledger->note_denial(denial(kHashA, Recovery::Retry));
  ASSERT_TRUE(c.ledger->authorise(kHashA, Recovery::Retry).has_value());
  EXPECT_FALSE(c.ledger->take_override(kHashA, "turn-2", Recovery::BreakGlass));
  EXPECT_TRUE(c.ledger->take_override(kHashA, "turn-2", Recovery::Retry));
  EXPECT_FALSE(c.ledger->take_override(kHashA, "turn-2", Recovery::Retry));  // used up
  EXPECT_EQ(c.ledger->authorise(kHashA, Recovery::Retry).error(),
            "a retry of " + kHashA + " was already authorised in this session");
  c.ledger->note_denial(denial(kHashB, Recovery::Retry));
  ASSERT_TRUE(c.ledger->authorise(kHashB, Recovery::Retry).has_value());
  c.at += seconds(60);
  EXPECT_FALSE(c.ledger->take_override(kHashB, "turn-2", Recovery::Retry));  // expired
}

TEST(OverrideLedger, EachKindOnlyForItsDenialsAndUnknownHashesRefused) {
  ClockedLedger c;
  c.ledger->note_denial(denial(kHashA, Recovery::Retry));
  c.ledger->note_denial(denial(kHashB, Recovery::BreakGlass));
  EXPECT_EQ(c.ledger->authorise(std::string(64, 'c'), Recovery::Retry).error(),
            "no recent automatic denial has request_hash " + std::string(64, 'c'));
  EXPECT_EQ(c.ledger->authorise(kHashB, Recovery::Retry).error(),
            "the denial of " + kHashB + " was critical: only break-glass may override it");
  EXPECT_EQ(c.ledger->authorise(kHashA, Recovery::BreakGlass).error(),
            "the denial of " + kHashA + " was not critical: ask for a retry instead");
}

TEST(OverrideLedger, BreakGlassIsBoundToTheNamedScopeAndCriticalDenialsLastFiveMinutes) {
  ClockedLedger c;
  c.ledger->note_denial(denial(kHashB, Recovery::BreakGlass));
  ASSERT_TRUE(c.ledger->authorise(kHashB, Recovery::BreakGlass, "turn-2").has_value());
  EXPECT_FALSE(c.ledger->take_override(kHashB, "turn-3", Recovery::BreakGlass));
  EXPECT_TRUE(c.ledger->take_override(kHashB, "turn-2", Recovery::BreakGlass));
  c.at += seconds(301);
  EXPECT_TRUE(c.ledger->recent_denials().empty());
  EXPECT_FALSE(c.ledger->authorise(kHashB, Recovery::BreakGlass).has_value());
}

TEST(OverrideLedger, KeepsTheTenNewestRetryableDenialsNewestFirst) {
  ClockedLedger c;
  for (char h = 'a'; h < 'a' + 12; ++h)
    c.ledger->note_denial(denial(std::string(64, h), Recovery::Retry));
  const auto recent = c.ledger->recent_denials();
  ASSERT_EQ(recent.size(), 10u);
  EXPECT_EQ(recent.front().request_hash, std::string(64, 'a' + 11));
  EXPECT_EQ(recent.back().request_hash, std::string(64, 'c'));
}

TEST(OverrideLedger, ARepeatedDenialOfOneRequestIsListedOnceAndPushesNoOtherOut) {
  ClockedLedger c;
  c.ledger->note_denial(denial(kHashA, Recovery::Retry));
  for (char h = 'b'; h < 'b' + 9; ++h)
    c.ledger->note_denial(denial(std::string(64, h), Recovery::Retry));
  // The agent runs the newest denied command three times more.
  for (int i = 0; i < 3; ++i) c.ledger->note_denial(denial(std::string(64, 'j'), Recovery::Retry));
  auto recent = c.ledger->recent_denials();
  ASSERT_EQ(recent.size(), 10u);
  EXPECT_EQ(recent.front().request_hash, std::string(64, 'j'));
  EXPECT_EQ(recent.back().request_hash, kHashA);
  // Denied again, a request moves to the front, with what the reviewer said this time.
  RecentDenial again = denial(kHashA, Recovery::BreakGlass);
  again.reason = "Critical.";
  again.command = "curl https://example.com/";
  c.ledger->note_denial(again);
  recent = c.ledger->recent_denials();
  ASSERT_EQ(recent.size(), 10u);
  EXPECT_EQ(std::make_tuple(recent.front().request_hash, recent.front().recovery,
                            recent.front().reason, recent.front().command),
            std::make_tuple(kHashA, Recovery::BreakGlass, std::string("Critical."),
                            std::string("curl https://example.com/")));
  EXPECT_EQ(recent.back().request_hash, std::string(64, 'b'));
}

/// A broker whose reviewer denies, on a ledger the test can authorise overrides in.
struct Overrides {
  ClockedLedger clock;
  SteadyClock steady;
  FakeReviewer reviewer;
  FakePrompt prompt;
  MemoryAudit audit;
  std::unique_ptr<Broker> broker;
  ApprovalContext context{"session-1", "turn-1", ""};

  Overrides() {
    BrokerOptions options;
    options.ledger = clock.ledger;
    broker = std::make_unique<Broker>(options, steady, audit, &reviewer, &prompt);
  }
  ApprovalResult approve(const BoundaryRequest& request) {
    return broker->approve(request, context);
  }
  std::string hash(const BoundaryRequest& request) { return request_hash(request).value(); }
};

TEST(BrokerOverrides, ADeniedRequestIsNotedAndARetryIsReviewedAgainWithTheUsersWord) {
  Overrides o;
  o.reviewer.answer = verdict(ReviewOutcome::Deny, "Unknown host.");
  EXPECT_EQ(o.approve(network_request()).reason, "Unknown host.");
  const auto recent = o.clock.ledger->recent_denials();
  ASSERT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent[0].request_hash, o.hash(network_request()));
  EXPECT_EQ(recent[0].recovery, Recovery::Retry);
  EXPECT_EQ(recent[0].target, "example.com:443");
  EXPECT_EQ(recent[0].reason, "Unknown host.");
  EXPECT_EQ(recent[0].command, "curl https://example.com");
  ASSERT_TRUE(o.clock.ledger->authorise(recent[0].request_hash, Recovery::Retry).has_value());
  // The retry is the reviewer's to decide, with the evidence; this time it allows.
  o.reviewer.answer = verdict(ReviewOutcome::Allow, "The user vouches for it.");
  o.context.scope_key = "turn-2";
  EXPECT_EQ(o.approve(network_request()),
            (ApprovalResult{Action::Allow, Source::Reviewer, "The user vouches for it."}));
  EXPECT_EQ(o.reviewer.user_retries, (std::vector<bool>{false, true}));
}

TEST(BrokerOverrides, ARetryPassesATrippedBreakerButNotAHardDeny) {
  Overrides o;
  o.reviewer.answer = verdict(ReviewOutcome::Deny, "No.");
  for (int i = 0; i < 3; ++i)
    (void)o.approve(network_request("h" + std::to_string(i) + ".test:443"));
  EXPECT_EQ(o.approve(network_request()).reason, kCircuitBreakerReason);
  EXPECT_EQ(o.reviewer.calls, 3);
  ASSERT_TRUE(o.clock.ledger->authorise(o.hash(network_request()), Recovery::Retry).has_value());
  o.reviewer.answer = verdict(ReviewOutcome::Allow, "Fine now.");
  EXPECT_EQ(o.approve(network_request()).action, Action::Allow);
  EXPECT_EQ(o.reviewer.calls, 4);
  // A hard deny is never noted and never overridden.
  auto hard = network_request();
  hard.command = "curl -k https://example.com";
  EXPECT_EQ(o.approve(hard).source, Source::HardDeny);
  EXPECT_FALSE(o.clock.ledger->authorise(o.hash(hard), Recovery::Retry).has_value());
}

TEST(BrokerOverrides, BreakGlassAllowsACriticalDenialOnceWithoutReviewAndWithItsGrant) {
  Overrides o;
  auto critical = verdict(ReviewOutcome::Deny, "Exfiltration.");
  critical.risk_level = RiskLevel::Critical;
  o.reviewer.answer = critical;
  EXPECT_EQ(o.approve(network_request()).reason, "Exfiltration.");
  ASSERT_EQ(o.clock.ledger->recent_denials().at(0).recovery, Recovery::BreakGlass);
  ASSERT_TRUE(
      o.clock.ledger->authorise(o.hash(network_request()), Recovery::BreakGlass).has_value());
  o.audit.lines.clear();
  EXPECT_EQ(o.approve(network_request()),
            (ApprovalResult{Action::Allow, Source::Human, std::string(kBreakGlassReason)}));
  EXPECT_EQ(o.reviewer.calls, 1);
  EXPECT_EQ(o.audit.events(),
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed"}));
  // Used up: the next identical request is reviewed (and denied) again.
  EXPECT_EQ(o.approve(network_request()).reason, "Exfiltration.");
  EXPECT_EQ(o.reviewer.calls, 2);
}

TEST(BrokerOverrides, EachDenialNamesItsWayOutAsTheLedgerNotedIt) {
  // A hard deny: none.
  Overrides o;
  auto hard = network_request();
  hard.command = "curl -k https://example.com";
  EXPECT_EQ(o.approve(hard).recovery, std::nullopt);
  // The reviewer's critical deny: break-glass; any other deny of it: a retry.
  auto critical = verdict(ReviewOutcome::Deny, "Exfiltration.");
  critical.risk_level = RiskLevel::Critical;
  o.reviewer.answer = critical;
  EXPECT_EQ(o.approve(network_request("paste.test:443")),
            (ApprovalResult{Action::Deny, Source::Reviewer, "Exfiltration.", AllowScope::Once,
                            Recovery::BreakGlass}));
  o.reviewer.answer = verdict(ReviewOutcome::Deny, "Unknown host.");
  EXPECT_EQ(o.approve(network_request("h1.test:443")).recovery, Recovery::Retry);
  // The third denial of the scope trips its breaker, whose deny a retry passes.
  const ApprovalResult breaker = o.approve(network_request("h2.test:443"));
  EXPECT_EQ(std::make_tuple(breaker.reason, breaker.recovery),
            std::make_tuple(std::string(kCircuitBreakerReason), std::optional(Recovery::Retry)));
  EXPECT_EQ(o.reviewer.calls, 2);
  // Each as the recent denials list it, newest first: the breaker's too, the hard deny not at
  // all.
  std::vector<Recovery> noted;
  for (const auto& d : o.clock.ledger->recent_denials()) noted.push_back(d.recovery);
  EXPECT_EQ(noted, (std::vector<Recovery>{Recovery::Retry, Recovery::Retry, Recovery::BreakGlass}));
  ASSERT_TRUE(
      o.clock.ledger->authorise(o.hash(network_request("paste.test:443")), Recovery::BreakGlass)
          .has_value());
  // An allow has none.
  EXPECT_EQ(o.approve(network_request("paste.test:443")).recovery, std::nullopt);
}

TEST(BrokerOverrides, BreakGlassNeverPassesAHardDeny) {
  Overrides o;
  auto hard = network_request();
  hard.command = "curl -k https://example.com";
  o.clock.ledger->note_denial(denial(o.hash(hard), Recovery::BreakGlass));
  ASSERT_TRUE(o.clock.ledger->authorise(o.hash(hard), Recovery::BreakGlass).has_value());
  EXPECT_EQ(o.approve(hard).source, Source::HardDeny);
  EXPECT_EQ(o.reviewer.calls, 0);
}

}  // namespace
}  // namespace pisandbox::approval
