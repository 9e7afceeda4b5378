// The approval ledger between serve and its workers (docs/ARCHITECTURE.md, "The approval
// ledger between serve and its workers"; docs/protocol.md, "Answers, sources and reasons"):
// the exact bytes of the internal lines, what a parser refuses, and what the SessionBook
// answers and settles.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "serve/ledger_lines.hpp"
#include "serve/session_book.hpp"

namespace pisandbox::serve {
namespace {

using approval::ReviewOutcome;

LedgerRequest request(std::uint64_t seq, LedgerOp op, std::string scope, std::string destination,
                      ReviewOutcome outcome = ReviewOutcome::Deny) {
  LedgerRequest r;
  r.seq = seq;
  r.op = op;
  r.scope = std::move(scope);
  r.destination = std::move(destination);
  r.outcome = outcome;
  return r;
}

/// The line without its "\n", as serve reads it.
std::string unframed(std::string line) {
  EXPECT_TRUE(line.ends_with('\n')) << line;
  line.pop_back();
  return line;
}

TEST(LedgerLines, RequestsHaveExactBytes) {
  EXPECT_EQ(ledger_request_line(request(1, LedgerOp::Tripped, "s:turn:1", "")),
            R"({"type":"ledger","seq":1,"op":"tripped","scope":"s:turn:1"})"
            "\n");
  EXPECT_EQ(ledger_request_line(request(2, LedgerOp::Record, "s", "", ReviewOutcome::Defer)),
            R"({"type":"ledger","seq":2,"op":"record","scope":"s","outcome":"defer"})"
            "\n");
  EXPECT_EQ(ledger_request_line(request(3, LedgerOp::Clear, "s", "")),
            R"({"type":"ledger","seq":3,"op":"clear","scope":"s"})"
            "\n");
  EXPECT_EQ(ledger_request_line(request(4, LedgerOp::SessionAllowed, "", "a.test:443")),
            R"({"type":"ledger","seq":4,"op":"session_allowed","destination":"a.test:443"})"
            "\n");
  EXPECT_EQ(ledger_request_line(request(5, LedgerOp::AllowSession, "", "a.test:443")),
            R"({"type":"ledger","seq":5,"op":"allow_session","destination":"a.test:443"})"
            "\n");
}

TEST(LedgerLines, RequestsRoundTrip) {
  for (const LedgerRequest& sent : {request(9, LedgerOp::Record, "s", "", ReviewOutcome::Allow),
                                    request(10, LedgerOp::AllowSession, "", "b.test:80")}) {
    const std::string line = unframed(ledger_request_line(sent));
    EXPECT_TRUE(is_ledger_request(line));
    const auto parsed = parse_ledger_request(line);
    ASSERT_TRUE(parsed.has_value()) << line;
    EXPECT_EQ(parsed->seq, sent.seq);
    EXPECT_EQ(parsed->op, sent.op);
    EXPECT_EQ(parsed->scope, sent.scope);
    EXPECT_EQ(parsed->destination, sent.destination);
    if (sent.op == LedgerOp::Record) {
      EXPECT_EQ(parsed->outcome, sent.outcome);
    }
  }
}

TEST(LedgerLines, ADenialCarriesWhatTheUserIsShownWithItsCommand) {
  LedgerRequest sent = request(11, LedgerOp::NoteDenial, "s:turn:1", "");
  sent.request_hash = std::string(64, 'a');
  sent.recovery = approval::Recovery::BreakGlass;
  sent.surface = "network";
  sent.target = "a.test:443";
  sent.reason = "No.";
  sent.command = "curl https://a.test/";
  const std::string line = unframed(ledger_request_line(sent));
  EXPECT_EQ(line,
            R"({"type":"ledger","seq":11,"op":"note_denial","scope":"s:turn:1","request_hash":")" +
                sent.request_hash +
                R"(","recovery":"break-glass","surface":"network","target":"a.test:443",)"
                R"("reason":"No.","command":"curl https://a.test/"})");
  const auto parsed = parse_ledger_request(line);
  ASSERT_TRUE(parsed.has_value()) << line;
  EXPECT_EQ(std::make_tuple(parsed->request_hash, parsed->recovery, parsed->surface, parsed->target,
                            parsed->reason, parsed->command),
            std::make_tuple(sent.request_hash, sent.recovery, sent.surface, sent.target,
                            sent.reason, sent.command));
}

TEST(LedgerLines, MalformedRequestsAreRefused) {
  for (const char* line : {
           R"({"type":"ledger","seq":1,"op":"forget","scope":"s"})",                // unknown op
           R"({"type":"ledger","op":"tripped","scope":"s"})",                       // no seq
           R"({"type":"ledger","seq":-1,"op":"tripped","scope":"s"})",              // negative
           R"({"type":"ledger","seq":"1","op":"tripped","scope":"s"})",             // a string
           R"({"type":"ledger","seq":1,"op":"record","scope":"s"})",                // no outcome
           R"({"type":"ledger","seq":1,"op":"record","scope":"s","outcome":"x"})",  // bad outcome
           R"({"type":"exec","seq":1,"op":"tripped","scope":"s"})",                 // not ledger
           R"({"type":"ledger","seq":1,"op":"tripped")",                            // cut
       })
    EXPECT_FALSE(parse_ledger_request(line).has_value()) << line;
}

TEST(LedgerLines, OnlyLedgerLinesAreKeptFromTheHost) {
  EXPECT_TRUE(is_ledger_request(R"({"type":"ledger","seq":1})"));
  EXPECT_FALSE(is_ledger_request(R"({"type":"output","id":"a","stream":"stdout","data":"x"})"));
  EXPECT_FALSE(is_ledger_request(R"({"type":"ledger_reply","seq":1,"value":true})"));
  EXPECT_FALSE(is_ledger_request(R"( {"type":"ledger","seq":1})"));
}

TEST(LedgerLines, RepliesAndSettlesHaveExactBytesAndRoundTrip) {
  EXPECT_EQ(ledger_reply_line(7, true), R"({"type":"ledger_reply","seq":7,"value":true})"
                                        "\n");
  const auto reply = parse_ledger_reply(unframed(ledger_reply_line(8, false)));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->seq, 8u);
  EXPECT_FALSE(reply->value);
  EXPECT_FALSE(parse_ledger_reply(R"({"type":"ledger_reply","seq":8,"value":"no"})"));
  EXPECT_FALSE(parse_ledger_reply(R"({"type":"ledger_reply","value":true})"));
  EXPECT_FALSE(parse_ledger_reply(R"({"type":"settle","request_id":"r1"})"));

  EXPECT_EQ(settle_line("r1"), R"({"type":"settle","request_id":"r1"})"
                               "\n");
  EXPECT_EQ(parse_settle(unframed(settle_line("r\"2"))), "r\"2");
  EXPECT_FALSE(parse_settle(R"({"type":"settle","request_id":3})"));
  EXPECT_FALSE(parse_settle(R"({"type":"ledger_reply","seq":8,"value":true})"));
}

/// A SessionBook whose control-pipe lines are kept as (command id, line).
struct Book {
  std::vector<std::pair<std::string, std::string>> sent;
  SessionBook book{
      [this](const std::string& id, const std::string& line) { sent.emplace_back(id, line); }};

  /// Asks `op` for command `id` and returns serve's reply line (the last line sent to `id`).
  std::string ask(const std::string& id, const LedgerRequest& r) {
    book.answer(id, unframed(ledger_request_line(r)));
    EXPECT_FALSE(sent.empty());
    EXPECT_EQ(sent.back().first, id);
    return sent.empty() ? "" : sent.back().second;
  }
};

std::string reply(std::uint64_t seq, bool value) {
  return ledger_reply_line(seq, value);
}

std::string network_question(const std::string& id, const std::string& request_id,
                             const std::string& destination) {
  return R"({"type":"approval_request","id":")" + id + R"(","request_id":")" + request_id +
         R"(","request":{"surface":"network","operation":"connect","destination":")" + destination +
         R"("}})";
}

TEST(SessionBook, TheBreakerOfAScopeCountsAcrossCommands) {
  Book b;
  EXPECT_EQ(b.ask("a", request(1, LedgerOp::Tripped, "s", "")), reply(1, false));
  // Three denials in a row, from two commands of the same scope (compatibility C75).
  b.ask("a", request(2, LedgerOp::Record, "s", "", ReviewOutcome::Deny));
  b.ask("b", request(1, LedgerOp::Record, "s", "", ReviewOutcome::Deny));
  EXPECT_EQ(b.ask("b", request(2, LedgerOp::Tripped, "s", "")), reply(2, false));
  EXPECT_EQ(b.ask("c", request(1, LedgerOp::Record, "s", "", ReviewOutcome::Deny)), reply(1, true));
  EXPECT_EQ(b.ask("c", request(2, LedgerOp::Tripped, "s", "")), reply(2, true));
  EXPECT_EQ(b.ask("c", request(3, LedgerOp::Tripped, "other", "")), reply(3, false));
  EXPECT_EQ(b.ask("a", request(3, LedgerOp::Clear, "s", "")), reply(3, true));
  EXPECT_EQ(b.ask("a", request(4, LedgerOp::Tripped, "s", "")), reply(4, false));
}

TEST(SessionBook, AnAllowForTheSessionSettlesTheOpenQuestionsItCovers) {
  Book b;
  b.book.opened("a", network_question("a", "r1", "x.test:443"));
  b.book.opened("a", network_question("a", "r2", "y.test:443"));
  b.book.opened("c", network_question("c", "r1", "x.test:443"));
  EXPECT_TRUE(b.sent.empty());
  EXPECT_EQ(b.ask("b", request(1, LedgerOp::SessionAllowed, "", "x.test:443")), reply(1, false));
  b.sent.clear();
  b.book.answer(
      "b", unframed(ledger_request_line(request(2, LedgerOp::AllowSession, "", "x.test:443"))));
  EXPECT_EQ(b.sent,
            (std::vector<std::pair<std::string, std::string>>{
                {"a", settle_line("r1")}, {"c", settle_line("r1")}, {"b", reply(2, true)}}));
  EXPECT_EQ(b.ask("a", request(1, LedgerOp::SessionAllowed, "", "x.test:443")), reply(1, true));
  // Settled once: a second allow for the same destination settles nothing more.
  b.sent.clear();
  b.book.answer(
      "b", unframed(ledger_request_line(request(3, LedgerOp::AllowSession, "", "x.test:443"))));
  EXPECT_EQ(b.sent, (std::vector<std::pair<std::string, std::string>>{{"b", reply(3, true)}}));
  EXPECT_EQ(b.book.ended("a"), std::vector<std::string>{"r2"});
  EXPECT_EQ(b.book.ended("c"), std::vector<std::string>{});
}

TEST(SessionBook, AQuestionForADestinationAlreadyAllowedIsSettledAtOnce) {
  Book b;
  b.ask("b", request(1, LedgerOp::AllowSession, "", "x.test:443"));
  b.sent.clear();
  b.book.opened("a", network_question("a", "r7", "x.test:443"));
  EXPECT_EQ(b.sent, (std::vector<std::pair<std::string, std::string>>{{"a", settle_line("r7")}}));
  EXPECT_EQ(b.book.ended("a"), std::vector<std::string>{});
}

TEST(SessionBook, AnsweredAndHostIpcQuestionsAreNotSettled) {
  Book b;
  b.book.opened("a", network_question("a", "r1", "x.test:443"));
  b.book.answered("a", "r1");
  b.book.opened("a", network_question("a", "r2", "x.test:443"));
  b.book.settled("a", R"({"type":"approval_settled","id":"a","request_id":"r2"})");
  b.book.opened("a",
                R"({"type":"approval_request","id":"a","request_id":"r3","request":)"
                R"({"surface":"host-ipc","operation":"execute-host","command":"x.test:443"}})");
  b.ask("b", request(1, LedgerOp::AllowSession, "", "x.test:443"));
  EXPECT_EQ(b.sent, (std::vector<std::pair<std::string, std::string>>{{"b", reply(1, true)}}));
  EXPECT_EQ(b.book.ended("a"), std::vector<std::string>{});
}

TEST(SessionBook, AMalformedLedgerLineIsIgnored) {
  Book b;
  b.book.answer("a", R"({"type":"ledger","seq":1,"op":"forget"})");
  b.book.answer("a", "not json");
  EXPECT_TRUE(b.sent.empty());
}

}  // namespace
}  // namespace pisandbox::serve
