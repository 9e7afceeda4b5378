// Unit tests of src/approval/audit_tail: audit lines (written by audit_line(), and by hand for
// the odd cases) grouped into one decision each, the readable line and the JSON object of
// `pi-sandbox approvals tail` (docs/approvals.md, "Reading the log").
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "approval/audit.hpp"
#include "approval/audit_tail.hpp"
#include "approval_fixtures.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::json;
using testing::network_request;

std::chrono::system_clock::time_point at_second(int second) {
  using namespace std::chrono;
  return sys_days{year{2024} / May / 1} + hours(12) + minutes(34) + seconds(second);
}

// One audit line as the broker writes it, without the newline.
std::string line(AuditEvent event, const BoundaryRequest& request, const AuditDetails& details,
                 int second = 0) {
  std::string text = audit_line(event, request, details, at_second(second));
  text.pop_back();
  return text;
}

const AuditDetails kBroker{std::nullopt, "broker", {}};

std::vector<std::string> readable(const std::vector<AuditDecision>& decisions) {
  std::vector<std::string> out;
  for (const auto& d : decisions) out.push_back(readable_line(d));
  return out;
}

// Feeds every line and returns what add_line() and then flush() gave, as readable lines.
std::vector<std::string> grouped(const std::vector<std::string>& lines) {
  AuditGrouper grouper;
  std::vector<AuditDecision> all;
  for (const auto& l : lines)
    for (auto& d : grouper.add_line(l)) all.push_back(std::move(d));
  for (auto& d : grouper.flush()) all.push_back(std::move(d));
  return readable(all);
}

BoundaryRequest host_ipc_request(std::string command) {
  BoundaryRequest r;
  r.id = "sandbox-runtime-host-ipc-1";
  r.source = "sandbox-runtime";
  r.surface = Surface::HostIpc;
  r.operation = "execute-host";
  r.cwd = "/home/u/ws";
  r.command = std::move(command);
  return r;
}

TEST(AuditLine, NetworkLineNamesTheCommandLast) {
  const auto j =
      nlohmann::ordered_json::parse(line(AuditEvent::GrantConsumed, network_request(), kBroker));
  EXPECT_EQ(j.at("destination"), "example.com:443");
  EXPECT_EQ(j.at("command"), "curl https://example.com");
  EXPECT_EQ(j.items().begin().key(), "time");
  std::string last;
  for (const auto& item : j.items()) last = item.key();
  EXPECT_EQ(last, "command");
}

TEST(AuditTail, AnAllowAndItsGrantAreOneLine) {
  const BoundaryRequest r = network_request();
  EXPECT_EQ(grouped({line(AuditEvent::ReviewDecision, r, {Action::Allow, "reviewer", "Known."}),
                     line(AuditEvent::GrantIssued, r, kBroker),
                     line(AuditEvent::GrantConsumed, r, kBroker)}),
            std::vector<std::string>{"2024-05-01T12:34:00.000Z allow network example.com:443 "
                                     "(curl https://example.com) by the reviewer: Known."});
}

TEST(AuditTail, SourcesInWords) {
  EXPECT_EQ(source_in_words("human"), "by the user");
  EXPECT_EQ(source_in_words("reviewer"), "by the reviewer");
  EXPECT_EQ(source_in_words("hard-deny"), "hard deny");
  EXPECT_EQ(source_in_words("unavailable"), "nobody could be asked");
  EXPECT_EQ(source_in_words("invalid-grant"), "invalid grant");
  EXPECT_EQ(source_in_words("pi"), "by pi");
  const BoundaryRequest r = network_request();
  EXPECT_EQ(grouped({line(AuditEvent::ReviewDecision, r,
                          {Action::Deny, "unavailable", "Nobody there."}, 1),
                     line(AuditEvent::HardDeny, r, {Action::Deny, "hard-deny", "No."}, 2)}),
            (std::vector<std::string>{
                "2024-05-01T12:34:01.000Z deny network example.com:443 (curl https://example.com) "
                "nobody could be asked: Nobody there.",
                "2024-05-01T12:34:02.000Z deny network example.com:443 (curl https://example.com) "
                "hard deny: No."}));
}

TEST(AuditTail, AHardDenySaysSoOnce) {
  const BoundaryRequest r = network_request();
  const std::string reason =
      "Hard deny (transport-security-weakening): `curl -k` turns off TLS certificate "
      "verification.";
  EXPECT_EQ(grouped({line(AuditEvent::HardDeny, r, {Action::Deny, "hard-deny", reason})}),
            std::vector<std::string>{
                "2024-05-01T12:34:00.000Z deny network example.com:443 (curl "
                "https://example.com) hard deny (transport-security-weakening): `curl -k` "
                "turns off TLS certificate verification."});
}

TEST(AuditTail, ADenyIsCompleteAtOnce) {
  AuditGrouper grouper;
  const auto got = grouper.add_line(
      line(AuditEvent::ReviewDecision, network_request(), {Action::Deny, "human", "Denied."}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].events, std::vector<std::string>{"review_decision"});
  EXPECT_TRUE(grouper.flush().empty());
}

TEST(AuditTail, AnOpenAllowHoldsBackTheDecisionsAfterIt) {
  const BoundaryRequest a = network_request();
  BoundaryRequest b = network_request();
  b.destination = "other.test:80";
  AuditGrouper grouper;
  EXPECT_TRUE(
      grouper.add_line(line(AuditEvent::ReviewDecision, a, {Action::Allow, "human", "Y"})).empty());
  EXPECT_TRUE(
      grouper.add_line(line(AuditEvent::ReviewDecision, b, {Action::Deny, "human", "N"})).empty());
  EXPECT_TRUE(grouper.add_line(line(AuditEvent::GrantIssued, a, kBroker)).empty());
  const auto got = grouper.add_line(line(AuditEvent::GrantConsumed, a, kBroker));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].destination, "example.com:443");
  EXPECT_EQ(got[0].events,
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed"}));
  EXPECT_EQ(got[1].destination, "other.test:80");
}

TEST(AuditTail, GrantsOfRequestsThatSharedADecisionAddNoLine) {
  const BoundaryRequest r = network_request();
  const std::vector<std::string> shown = grouped(
      {line(AuditEvent::ReviewDecision, r, {Action::Allow, "human", "Y"}),
       line(AuditEvent::GrantIssued, r, kBroker), line(AuditEvent::GrantConsumed, r, kBroker),
       line(AuditEvent::GrantIssued, r, kBroker), line(AuditEvent::GrantConsumed, r, kBroker),
       // The start of a file cut off: grant lines without their decision.
       line(AuditEvent::GrantConsumed, host_ipc_request("ls"), kBroker)});
  EXPECT_EQ(shown.size(), 1u);
}

TEST(AuditTail, TwoDecisionsOfOneHashInterleaved) {
  const BoundaryRequest r = network_request();
  const auto allow = [&](int second) {
    return line(AuditEvent::ReviewDecision, r, {Action::Allow, "reviewer", "Y"}, second);
  };
  const auto shown = grouped({allow(1), allow(2), line(AuditEvent::GrantIssued, r, kBroker),
                              line(AuditEvent::GrantConsumed, r, kBroker),
                              line(AuditEvent::GrantIssued, r, kBroker),
                              line(AuditEvent::GrantConsumed, r, kBroker)});
  ASSERT_EQ(shown.size(), 2u);
  EXPECT_TRUE(shown[0].starts_with("2024-05-01T12:34:01.000Z allow ")) << shown[0];
  EXPECT_TRUE(shown[1].starts_with("2024-05-01T12:34:02.000Z allow ")) << shown[1];
}

TEST(AuditTail, ARejectedGrantTurnsTheAllowIntoADeny) {
  const BoundaryRequest r = network_request();
  AuditGrouper grouper;
  EXPECT_TRUE(
      grouper.add_line(line(AuditEvent::ReviewDecision, r, {Action::Allow, "human", "Y"}, 3))
          .empty());
  EXPECT_TRUE(grouper.add_line(line(AuditEvent::GrantIssued, r, kBroker)).empty());
  const auto got = grouper.add_line(
      line(AuditEvent::GrantRejected, r, {Action::Deny, "invalid-grant", "Grant expired."}, 4));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(readable_line(got[0]),
            "2024-05-01T12:34:03.000Z deny network example.com:443 (curl https://example.com) "
            "invalid grant: Grant expired.");
  // A rejection with no allow before it is a deny of its own.
  EXPECT_EQ(grouped({line(AuditEvent::GrantRejected, r, {Action::Deny, "broker", "no grant"}, 5)}),
            std::vector<std::string>{"2024-05-01T12:34:05.000Z deny network example.com:443 "
                                     "(curl https://example.com) invalid grant: no grant"});
}

TEST(AuditTail, AnAllowWithoutItsGrantIsShownAtTheEnd) {
  const BoundaryRequest r = network_request();
  AuditGrouper grouper;
  EXPECT_TRUE(
      grouper.add_line(line(AuditEvent::ReviewDecision, r, {Action::Allow, "human", "Y"})).empty());
  const auto got = grouper.flush();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].action, "allow");
  EXPECT_EQ(got[0].events, std::vector<std::string>{"review_decision"});
}

TEST(AuditTail, HostIpcShowsTheCommandOnceCut) {
  const std::string command = "tmux -S /tmp/tmux-1000/default list-sessions && echo " +
                              std::string(60, 'x') + " \xc3\xa9\xc3\xa9";
  const auto shown = grouped({line(AuditEvent::ReviewDecision, host_ipc_request(command),
                                   {Action::Deny, "human", "Denied by the user."}, 7)});
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_EQ(shown[0], "2024-05-01T12:34:07.000Z deny host-ipc " + command.substr(0, 80) +
                          "\u2026 by the user: Denied by the user.");
  // Cut on a character boundary: 79 bytes, not half of an é.
  const std::string accented = std::string(79, 'a') + "\xc3\xa9 tail";
  const auto cut = grouped({line(AuditEvent::ReviewDecision, host_ipc_request(accented),
                                 {Action::Deny, "human", "N"}, 7)});
  EXPECT_EQ(cut[0], "2024-05-01T12:34:07.000Z deny host-ipc " + std::string(79, 'a') +
                        "\u2026 by the user: N");
}

TEST(AuditLine, AFilesystemLineNamesThePathAfterTheCommand) {
  BoundaryRequest r = host_ipc_request("cat a");
  r.surface = Surface::FilesystemRead;
  r.path = "a";
  r.resolved_path = "/w/a";
  const auto j = nlohmann::ordered_json::parse(
      line(AuditEvent::HardDeny, r, {Action::Deny, "hard-deny", "No."}));
  std::vector<std::string> keys;
  for (const auto& item : j.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"time", "event", "request_hash", "surface", "command",
                                            "action", "source", "reason", "path"}));
  EXPECT_EQ(j.at("path"), "/w/a");
}

TEST(AuditTail, FilesystemShowsThePathAndTheCommand) {
  BoundaryRequest r = host_ipc_request("cat ~/.ssh/id_rsa");
  r.surface = Surface::FilesystemRead;
  r.operation = "read";
  r.path = "~/.ssh/id_rsa";
  r.resolved_path = "/home/u/.ssh/id_rsa";
  EXPECT_EQ(grouped({line(AuditEvent::HardDeny, r, {Action::Deny, "hard-deny", "Secret."})}),
            std::vector<std::string>{"2024-05-01T12:34:00.000Z deny filesystem-read "
                                     "/home/u/.ssh/id_rsa (cat ~/.ssh/id_rsa) hard deny: Secret."});
}

TEST(AuditTail, ControlCharactersStayOnOneLine) {
  BoundaryRequest r = network_request();
  r.command = "printf '\\033[2J'; curl x\ny";
  const auto shown = grouped(
      {line(AuditEvent::ReviewDecision, r, {Action::Deny, "reviewer", "line one\nline\x1b two"})});
  EXPECT_EQ(shown, std::vector<std::string>{
                       "2024-05-01T12:34:00.000Z deny network example.com:443 (printf "
                       "'\\033[2J'; curl x\\ny) by the reviewer: line one\\nline\\x1b two"});
}

TEST(AuditTail, UnreadableLinesAreShownAndFilteredOut) {
  const std::vector<std::string> lines = {"not json", R"({"time":"t"})", "[1]"};
  EXPECT_EQ(grouped(lines), (std::vector<std::string>{"(unreadable audit line) not json",
                                                      R"((unreadable audit line) {"time":"t"})",
                                                      "(unreadable audit line) [1]"}));
  AuditDecision d;
  d.unreadable = "not json";
  EXPECT_TRUE(matches(d, {}));
  EXPECT_FALSE(matches(d, {"network", ""}));
  EXPECT_FALSE(matches(d, {"", "deny"}));
  EXPECT_EQ(json_line(d), R"({"unreadable":"not json"})");
}

TEST(AuditTail, UnknownEventsWithoutAnActionAreSkipped) {
  EXPECT_TRUE(grouped({R"({"time":"t","event":"note","request_hash":"h"})"}).empty());
}

TEST(AuditTail, Filters) {
  AuditDecision d;
  d.surface = "network";
  d.action = "allow";
  EXPECT_TRUE(matches(d, {}));
  EXPECT_TRUE(matches(d, {"network", "allow"}));
  EXPECT_FALSE(matches(d, {"host-ipc", ""}));
  EXPECT_FALSE(matches(d, {"", "deny"}));
}

TEST(AuditTail, JsonLine) {
  const BoundaryRequest r = network_request();
  AuditGrouper grouper;
  (void)grouper.add_line(line(AuditEvent::ReviewDecision, r, {Action::Allow, "human", "Y"}));
  (void)grouper.add_line(line(AuditEvent::GrantIssued, r, kBroker));
  const auto got = grouper.add_line(line(AuditEvent::GrantConsumed, r, kBroker));
  ASSERT_EQ(got.size(), 1u);
  const std::string hash = request_hash(r).value();
  EXPECT_EQ(json_line(got[0]),
            R"({"time":"2024-05-01T12:34:00.000Z","action":"allow","source":"human",)"
            R"("surface":"network","destination":"example.com:443",)"
            R"("command":"curl https://example.com","reason":"Y","request_hash":")" +
                hash + R"(","events":["review_decision","grant_issued","grant_consumed"]})");
}

}  // namespace
}  // namespace pisandbox::approval
