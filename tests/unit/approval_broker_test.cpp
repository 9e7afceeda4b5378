// Unit tests of approval::Broker (the decision order of docs/compatibility.md, "Approvals") with a
// fake reviewer, a fake human and an in-memory audit sink; and of the terminal prompt's text.
#include <gtest/gtest.h>

#include <ctime>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "approval/broker.hpp"
#include "approval/terminal_prompt.hpp"
#include "approval_fixtures.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::json;

using testing::network_request;

using testing::FakePrompt;
using testing::FakeReviewer;
using testing::MemoryAudit;
using testing::verdict;

struct Fixture {
  SteadyClock clock;
  FakeReviewer reviewer;
  FakePrompt prompt;
  MemoryAudit audit;
  Broker broker{BrokerOptions{}, clock, audit, &reviewer, &prompt};
  ApprovalContext context{"session-1", "scope-1", ""};

  ApprovalResult approve(const BoundaryRequest& request) {
    return broker.approve(request, context);
  }
};

const std::vector<std::string> kAllowEvents = {"review_decision", "grant_issued", "grant_consumed"};

TEST(Broker, HardDenyNeverReachesReviewerOrHuman) {
  Fixture f;
  auto request = network_request();
  request.command = "curl -k https://example.com";
  const auto result = f.approve(request);
  EXPECT_EQ(result.action, Action::Deny);
  EXPECT_EQ(result.source, Source::HardDeny);
  EXPECT_NE(result.reason.find("transport-security-weakening"), std::string::npos);
  EXPECT_EQ(f.reviewer.calls, 0);
  EXPECT_TRUE(f.prompt.reasons.empty());
  EXPECT_EQ(f.audit.events(), std::vector<std::string>{"hard_deny"});
}

TEST(Broker, HardDeniesCountTowardsTheBreaker) {
  Fixture f;
  auto bad = network_request();
  bad.command = "curl --insecure https://example.com";
  for (int i = 0; i < 3; ++i) EXPECT_EQ(f.approve(bad).source, Source::HardDeny);
  const auto result = f.approve(network_request());
  EXPECT_EQ(result,
            (ApprovalResult{Action::Deny, Source::Reviewer, std::string(kCircuitBreakerReason),
                            AllowScope::Once, Recovery::Retry}));
  EXPECT_EQ(f.reviewer.calls, 0);
}

TEST(Broker, BreakerTripsAfterThreeConsecutiveDenialsPerScope) {
  Fixture f;
  f.reviewer.answer = verdict(ReviewOutcome::Deny, "no");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(f.approve(network_request()), (ApprovalResult{Action::Deny, Source::Reviewer, "no",
                                                            AllowScope::Once, Recovery::Retry}));
  EXPECT_EQ(f.reviewer.calls, 3);
  f.reviewer.answer = verdict(ReviewOutcome::Allow, "ok");
  EXPECT_EQ(f.approve(network_request()).reason, kCircuitBreakerReason);
  EXPECT_EQ(f.reviewer.calls, 3);
  EXPECT_TRUE(f.prompt.reasons.empty());  // a breaker deny is never overridden by a human

  f.context.scope_key = "scope-2";  // another scope is reviewed as usual
  EXPECT_EQ(f.approve(network_request()).action, Action::Allow);
  EXPECT_EQ(f.reviewer.calls, 4);

  f.broker.clear_scope("scope-1");
  f.context.scope_key = "scope-1";
  EXPECT_EQ(f.approve(network_request()).action, Action::Allow);
}

TEST(Broker, AllowsAndDefersResetTheConsecutiveRun) {
  Fixture f;
  for (int round = 0; round < 3; ++round) {
    f.reviewer.answer = verdict(ReviewOutcome::Deny, "no");
    f.approve(network_request());
    f.approve(network_request());
    f.reviewer.answer = verdict(ReviewOutcome::Defer, "ask");
    EXPECT_EQ(f.approve(network_request()).source, Source::Human);
  }
  f.reviewer.answer = verdict(ReviewOutcome::Allow, "ok");
  EXPECT_EQ(f.approve(network_request()).action, Action::Allow);
}

TEST(Broker, ReviewerDenyIsFinal) {
  Fixture f;
  f.reviewer.answer = verdict(ReviewOutcome::Deny, "Unknown host.");
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Deny, Source::Reviewer, "Unknown host.", AllowScope::Once,
                            Recovery::Retry}));
  EXPECT_TRUE(f.prompt.reasons.empty());
  EXPECT_EQ(f.audit.events(), std::vector<std::string>{"review_decision"});
}

TEST(Broker, ReviewerAllowIssuesAndConsumesAGrant) {
  Fixture f;
  f.reviewer.answer = verdict(ReviewOutcome::Allow, "Known registry.");
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Allow, Source::Reviewer, "Known registry."}));
  EXPECT_TRUE(f.prompt.reasons.empty());
  EXPECT_EQ(f.audit.events(), kAllowEvents);
  const auto decision = json::parse(f.audit.lines[0]);
  EXPECT_EQ(decision.at("action"), "allow");
  EXPECT_EQ(decision.at("source"), "reviewer");
  EXPECT_EQ(decision.at("destination"), "example.com:443");
  EXPECT_EQ(decision.at("request_hash"), *request_hash(network_request()));
  for (const auto& line : f.audit.lines) {
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1);
  }
}

TEST(Broker, DeferGoesToTheHumanWithTheRationale) {
  Fixture f;
  f.reviewer.answer = verdict(ReviewOutcome::Defer, "Needs the user.");
  f.context.warning = std::string(kHostIpcWarning);

  f.prompt.answer(HumanAnswer::AllowOnce);
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Allow, Source::Human, std::string(kHumanAllowReason)}));
  EXPECT_EQ(f.audit.events(), kAllowEvents);

  f.prompt.answer(HumanAnswer::Deny);
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Deny, Source::Human, std::string(kHumanDenyReason)}));

  f.prompt.answer(HumanAnswer::Unavailable);
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)}));

  EXPECT_EQ(f.prompt.reasons, std::vector<std::string>(3, "Needs the user."));
  EXPECT_EQ(f.prompt.warnings, std::vector<std::string>(3, std::string(kHostIpcWarning)));
  EXPECT_EQ(f.audit.events(),
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed",
                                      "review_decision", "review_decision"}));
}

TEST(Broker, DeferWithoutAHumanIsUnavailable) {
  SteadyClock clock;
  FakeReviewer reviewer;
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, &reviewer, nullptr);
  reviewer.answer = verdict(ReviewOutcome::Defer, "Needs the user.");
  EXPECT_EQ(broker.approve(network_request(), {"s", "k", ""}),
            (ApprovalResult{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)}));
}

TEST(Broker, WithoutAReviewerTheHumanDecides) {
  SteadyClock clock;
  FakePrompt prompt;
  MemoryAudit audit;
  Broker broker(BrokerOptions{}, clock, audit, nullptr, &prompt);
  EXPECT_EQ(broker.approve(network_request(), {"s", "k", ""}).source, Source::Human);
  EXPECT_EQ(prompt.reasons, std::vector<std::string>{""});
  EXPECT_EQ(audit.events(), kAllowEvents);
}

TEST(Broker, ReviewerFailureIsUnavailableAndCountsAsADenial) {
  Fixture f;
  f.reviewer.answer = std::unexpected(std::string("reviewer exited with status 3"));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(f.approve(network_request()),
              (ApprovalResult{Action::Deny, Source::Reviewer, "Automatic review is unavailable.",
                              AllowScope::Once, Recovery::Retry}));
  EXPECT_EQ(f.reviewer.calls, 9);  // each review tried again twice
  EXPECT_TRUE(f.prompt.reasons.empty());
  EXPECT_EQ(f.approve(network_request()).reason, kCircuitBreakerReason);
  // What failed is in the audit log only, never in the result the agent sees.
  EXPECT_EQ(json::parse(f.audit.lines.front())["reason"],
            "Automatic review is unavailable: reviewer exited with status 3");
}

TEST(Broker, AFailedReviewIsTriedAgainAndItsVerdictCounts) {
  Fixture f;
  f.reviewer.answers = {std::unexpected(std::string("reviewer timed out after 90 s")),
                        std::unexpected(std::string("reviewer output is empty"))};
  f.reviewer.answer = verdict(ReviewOutcome::Allow, "Known registry.");
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Allow, Source::Reviewer, "Known registry."}));
  EXPECT_EQ(f.reviewer.calls, 3);
  EXPECT_EQ(f.audit.events(), kAllowEvents);
}

TEST(Broker, ReviewerRetriesZeroAsksOnce) {
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = std::unexpected(std::string("reviewer exited with status 3"));
  MemoryAudit audit;
  BrokerOptions options;
  options.reviewer_retries = 0;
  Broker broker(options, clock, audit, &reviewer, nullptr);
  EXPECT_EQ(broker.approve(network_request(), {"s", "k", ""}).reason,
            "Automatic review is unavailable.");
  EXPECT_EQ(reviewer.calls, 1);
}

TEST(Broker, WithFailureModeDeferAFailedReviewAsksTheHumanAndIsNoDenial) {
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = std::unexpected(std::string("reviewer exited with status 3"));
  FakePrompt prompt;
  prompt.reply = {HumanAnswer::Deny, std::nullopt, {}};
  MemoryAudit audit;
  BrokerOptions options;
  options.reviewer_failure = ReviewerFailureMode::Defer;
  Broker broker(options, clock, audit, &reviewer, &prompt);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(broker.approve(network_request(), {"s", "k", ""}),
              (ApprovalResult{Action::Deny, Source::Human, std::string(kHumanDenyReason)}));
  // Asked each time with the fixed reason; four failures did not trip the breaker (three
  // denials would), since a deferred review is not a denial.
  EXPECT_EQ(prompt.reasons, std::vector<std::string>(4, "Automatic review is unavailable."));
  EXPECT_EQ(reviewer.calls, 12);
}

TEST(Broker, WithFailureModeDeferAndNoHumanAFailedReviewIsUnavailable) {
  SteadyClock clock;
  FakeReviewer reviewer;
  reviewer.answer = std::unexpected(std::string("reviewer exited with status 3"));
  MemoryAudit audit;
  BrokerOptions options;
  options.reviewer_failure = ReviewerFailureMode::Defer;
  Broker broker(options, clock, audit, &reviewer, nullptr);
  EXPECT_EQ(broker.approve(network_request(), {"s", "k", ""}),
            (ApprovalResult{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)}));
}

TEST(Broker, InvalidRequestIsDeniedBeforeAnyReview) {
  Fixture f;
  auto request = network_request();
  request.cwd = "  ";
  EXPECT_EQ(f.approve(request),
            (ApprovalResult{Action::Deny, Source::Unavailable,
                            "boundary request cwd must be a non-empty string"}));
  EXPECT_EQ(f.reviewer.calls, 0);
  EXPECT_EQ(f.audit.events(), std::vector<std::string>{"review_decision"});
}

TEST(Broker, AGrantThatCannotBeIssuedIsAnInvalidGrantDeny) {
  Fixture f;
  f.context.session_id = "";
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Deny, Source::InvalidGrant, std::string(kInvalidGrantReason)}));
  EXPECT_EQ(f.audit.events(), (std::vector<std::string>{"review_decision", "grant_rejected"}));
}

TEST(Broker, AnUnwritableAuditLogDenies) {
  Fixture f;
  f.audit.fail = true;
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Deny, Source::Unavailable,
                            "The audit log could not be written: disk full"}));
}

TEST(TerminalPromptText, TargetFollowsReferenceOrder) {
  auto request = network_request();
  EXPECT_EQ(approval_target(request), "example.com:443");
  request.path = "/w/a";
  EXPECT_EQ(approval_target(request), "/w/a");
  request.resolved_path = "/w/b";
  EXPECT_EQ(approval_target(request), "/w/b");
  request.surface = Surface::HostIpc;
  EXPECT_EQ(approval_target(request), "curl https://example.com");
  BoundaryRequest bare = network_request();
  bare.destination.reset();
  EXPECT_EQ(approval_target(bare), "connect");
  request.operation = "connect-unix";  // a host socket (docs/host-ipc.md): its path
  request.resolved_path.reset();
  EXPECT_EQ(approval_target(request), "/w/a");
}

TEST(TerminalPromptText, QuestionShowsWarningReasonAndChoices) {
  auto request = network_request();
  request.surface = Surface::HostIpc;
  request.operation = "execute-host";
  request.command = "tmux ls\n\x1b[2J\xc2\x9b";
  const HumanQuestion question{request, std::string(kHostIpcWarning), "Needs the user."};
  EXPECT_EQ(question_text(question),
            "Sandbox approval required: execute-host tmux ls\\n\\x1b[2J\\u009b\n"
            "Warning: this command will run on the host outside the OS sandbox.\n"
            "Needs the user.\n"
            "  1) Deny\n"
            "  2) Allow this exact operation once\n");
}

TEST(TerminalPromptText, DirectionControlsAreShownNotObeyed) {
  auto request = network_request();
  request.surface = Surface::HostIpc;
  request.operation = "execute-host";
  // U+202E (right-to-left override), U+2066 (left-to-right isolate), U+200F (RLM); U+2010
  // (a hyphen, same lead bytes) stays.
  request.command = "ls \xe2\x80\xae#\xe2\x81\xa6x\xe2\x80\x8f \xe2\x80\x90";
  const HumanQuestion question{request, "", ""};
  EXPECT_EQ(question_text(question),
            "Sandbox approval required: execute-host ls \\u202e#\\u2066x\\u200f \xe2\x80\x90\n"
            "  1) Deny\n"
            "  2) Allow this exact operation once\n");
}

TEST(TerminalPromptText, EveryDirectionControlAndTheArabicLetterMarkAreShownNotObeyed) {
  auto request = network_request();
  request.surface = Surface::HostIpc;
  request.operation = "execute-host";
  // U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C; U+061B (a letter, same lead byte)
  // and U+200D (a joiner, not a direction control) stay.
  request.command =
      "a\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae\xe2\x81\xa6\xe2\x81\xa7"
      "\xe2\x81\xa8\xe2\x81\xa9\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c\xd8\x9b\xe2\x80\x8d";
  const HumanQuestion question{request, "", ""};
  EXPECT_EQ(question_text(question),
            "Sandbox approval required: execute-host a\\u202a\\u202b\\u202c\\u202d\\u202e"
            "\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c\xd8\x9b\xe2\x80\x8d\n"
            "  1) Deny\n"
            "  2) Allow this exact operation once\n");
}

TEST(TerminalPromptText, AHostRunNamesTheFileItStarts) {
  auto request = network_request();
  request.surface = Surface::HostIpc;
  request.operation = "execute-host";
  request.destination.reset();
  request.command = "tmux -V";
  request.resolved_path = "/usr/bin/tmux\x1b[2J";
  const HumanQuestion question{request, std::string(kHostIpcWarning), ""};
  EXPECT_EQ(question_text(question),
            "Sandbox approval required: execute-host tmux -V\n"
            "Runs: /usr/bin/tmux\\x1b[2J\n"
            "Warning: this command will run on the host outside the OS sandbox.\n"
            "  1) Deny\n"
            "  2) Allow this exact operation once\n");
}

}  // namespace
}  // namespace pisandbox::approval

namespace pisandbox::approval {
namespace {

TEST(Broker, RememberedChoicesAreOfferedOnlyWhenTheCallerAsksAndAreAudited) {
  Fixture f;
  f.reviewer.answer = verdict(ReviewOutcome::Defer, "Needs the user.");
  f.prompt.answer(HumanAnswer::AllowForCommand);
  // Not offered: the answer cannot be taken, so it is no allow.
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Deny, Source::Unavailable, std::string(kNoHumanReason)}));
  f.context.offer_remembered = true;
  EXPECT_EQ(f.approve(network_request()),
            (ApprovalResult{Action::Allow, Source::Human, std::string(kHumanAllowForCommandReason),
                            AllowScope::Command}));
  EXPECT_EQ(f.prompt.offered, (std::vector<bool>{false, true}));
  // A request without a destination is never offered the remembered choices.
  auto host = network_request();
  host.surface = Surface::HostIpc;
  host.destination.reset();
  EXPECT_EQ(f.approve(host).action, Action::Deny);
  EXPECT_EQ(f.prompt.offered.back(), false);
  const auto issued = json::parse(f.audit.lines.at(2));
  EXPECT_EQ(issued.at("event"), "grant_issued");
  EXPECT_EQ(issued.at("reason"), "valid for the rest of this command");
}

}  // namespace
}  // namespace pisandbox::approval

namespace pisandbox::approval {
namespace {

TEST(TerminalPromptText, ANetworkQuestionNamesTheCommandAndOffersFourChoicesDenyFirst) {
  auto request = network_request("registry.npmjs.org:443");
  request.command = "npm install left-pad";
  const HumanQuestion question{request, "", "Needs the user.", true};
  EXPECT_EQ(question_text(question),
            "Sandbox approval required: connect registry.npmjs.org:443\n"
            "Command: npm install left-pad\n"
            "Needs the user.\n"
            "  1) Deny\n"
            "  2) Allow this exact operation once\n"
            "  3) Allow registry.npmjs.org:443 for the rest of this command\n"
            "  4) Allow registry.npmjs.org:443 for this session\n");
  EXPECT_EQ(choice_prompt(question_choices(question).size()), "Choice [1-4, Enter = Deny]: ");
  EXPECT_EQ(choice_prompt(2), "Choice [1-2, Enter = Deny]: ");
  std::vector<std::string> names;
  for (const auto& choice : question_choices(question)) names.emplace_back(choice.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"deny", "allow-once", "allow-command", "allow-session"}));
}

TEST(TerminalPromptText, ALongCommandIsCutAt200Characters) {
  auto request = network_request();
  // 199 ASCII characters, then "é" (2 bytes) as the 200th, then more.
  request.command = std::string(199, 'a') + "\xc3\xa9" + "bbb\n";
  const HumanQuestion question{request, "", ""};
  EXPECT_EQ(question_text(question),
            "Sandbox approval required: connect example.com:443\n"
            "Command: " +
                std::string(199, 'a') +
                "\xc3\xa9\xe2\x80\xa6\n"
                "  1) Deny\n"
                "  2) Allow this exact operation once\n");
  request.command = std::string(200, 'c');
  EXPECT_NE(question_text(question).find("Command: " + std::string(200, 'c') + "\n"),
            std::string::npos);
}

TEST(TerminalPromptText, ADeadlineOnAnotherDayNamesTheDay) {
  // Noon local time, so that neither +2 min nor -1 min crosses midnight in any time zone.
  std::tm noon{};
  noon.tm_year = 126;
  noon.tm_mon = 11;
  noon.tm_mday = 1;
  noon.tm_hour = 12;
  noon.tm_isdst = -1;
  const auto at = std::chrono::system_clock::from_time_t(std::mktime(&noon));
  EXPECT_EQ(deadline_line(std::chrono::seconds(120), at),
            "Unanswered, this is refused at 12:00:00 (in 120 s).");
  EXPECT_EQ(deadline_line(std::chrono::seconds(86400), at),
            "Unanswered, this is refused at 2026-12-01 12:00:00 (in 86400 s).");
}

TEST(TerminalPromptText, AQuestionWithADeadlineSaysWhenItIsRefused) {
  auto request = network_request();
  const auto now = std::chrono::steady_clock::time_point(std::chrono::hours(5));
  // 119.2 s left: shown as 120 s, rounded up.
  HumanQuestion question{request, "", "", false, now + std::chrono::milliseconds(119200)};
  const auto wall = std::chrono::system_clock::from_time_t(1700000000);
  const std::string line =
      deadline_line(std::chrono::seconds(120), wall + std::chrono::seconds(120));
  EXPECT_EQ(question_text(question, now, wall),
            "Sandbox approval required: connect example.com:443\n"
            "Command: curl https://example.com\n" +
                line +
                "\n"
                "  1) Deny\n"
                "  2) Allow this exact operation once\n");
  std::time_t at = 1700000120;
  std::tm local{};
  ::localtime_r(&at, &local);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
  EXPECT_EQ(line, "Unanswered, this is refused at " + std::string(clock) + " (in 120 s).");
}

}  // namespace
}  // namespace pisandbox::approval
