// Unit tests of src/approval: requests and their hash, grants, the circuit breaker,
// result names and audit lines. Hard denies, the reviewer's output and the shell parser
// have their own files.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "approval/audit.hpp"
#include "approval/boundary_request.hpp"
#include "approval/circuit_breaker.hpp"
#include "approval/clock.hpp"
#include "approval/grants.hpp"
#include "approval/result.hpp"
#include "approval/sha256.hpp"
#include "approval_fixtures.hpp"

namespace pisandbox::approval {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

using testing::network_request;

std::string hash_of(const BoundaryRequest& r) {
  auto hash = request_hash(r);
  EXPECT_TRUE(hash.has_value());
  return hash.value_or("");
}

// FIPS 180-4's examples (the NIST "SHA-256" example document): "abc" and the 448-bit message.
TEST(Sha256, GivesTheKnownDigests) {
  EXPECT_EQ(sha256_hex("abc").value(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").value(),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("").value(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// A clock the test advances by hand.
class ManualClock final : public Clock {
 public:
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override { return now_; }
  void advance(std::chrono::steady_clock::duration by) { now_ += by; }

 private:
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1000)};
};

// --- BoundaryRequest --------------------------------------------------------------------

TEST(BoundaryRequest, SurfaceNamesRoundTrip) {
  for (Surface s :
       {Surface::Network, Surface::HostIpc, Surface::FilesystemRead, Surface::FilesystemWrite}) {
    EXPECT_EQ(surface_from_string(to_string(s)), s);
  }
  EXPECT_EQ(to_string(Surface::HostIpc), "host-ipc");
  EXPECT_EQ(to_string(Surface::FilesystemWrite), "filesystem-write");
  EXPECT_FALSE(surface_from_string("Network"));
  EXPECT_FALSE(surface_from_string(""));
}

TEST(BoundaryRequest, ValidateAcceptsAFullRequest) {
  EXPECT_TRUE(validate(network_request()).has_value());
}

TEST(BoundaryRequest, ValidateRejectsBlankRequiredFieldsInOrder) {
  for (auto [member, name] :
       {std::pair{&BoundaryRequest::id, "id"}, std::pair{&BoundaryRequest::source, "source"},
        std::pair{&BoundaryRequest::operation, "operation"},
        std::pair{&BoundaryRequest::cwd, "cwd"}}) {
    for (const char* blank : {"", "   ", "\t\n"}) {
      BoundaryRequest r = network_request();
      r.*member = blank;
      const auto result = validate(r);
      ASSERT_FALSE(result.has_value()) << name;
      EXPECT_EQ(result.error().message,
                std::string("boundary request ") + name + " must be a non-empty string");
    }
  }
  BoundaryRequest r = network_request();
  r.id = "";
  r.cwd = "";
  EXPECT_EQ(validate(r).error().message, "boundary request id must be a non-empty string");
}

TEST(BoundaryRequest, ValidateRejectsInvalidUtf8) {
  BoundaryRequest r = network_request();
  r.command = std::string("echo \xff");
  EXPECT_EQ(validate(r).error().message, "boundary request command must be valid UTF-8");
  r = network_request();
  r.cwd = "/\xc3";
  EXPECT_EQ(validate(r).error().message, "boundary request cwd must be valid UTF-8");
}

TEST(BoundaryRequest, ToJsonUsesCamelCaseAndDropsAbsentFields) {
  BoundaryRequest r = network_request();
  r.resolved_path = "/x";
  r.tool_input_preview = "";
  r.matched_policy = MatchedPolicy{"network.ask"};
  const json j = to_json(r);
  EXPECT_EQ(j.at("resolvedPath"), "/x");
  EXPECT_EQ(j.at("toolInputPreview"), "");
  EXPECT_EQ(j.at("matchedPolicy"), json({{"decision", "ask"}, {"rule", "network.ask"}}));
  EXPECT_EQ(j.at("surface"), "network");
  EXPECT_EQ(j.at("id"), "sandbox-runtime-network-1");
  EXPECT_FALSE(j.contains("path"));
  EXPECT_FALSE(j.contains("agentName"));
  EXPECT_EQ(j.size(), 10u);
}

TEST(BoundaryRequest, JsonRoundTrip) {
  BoundaryRequest r = network_request();
  r.surface = Surface::FilesystemRead;
  r.path = "a";
  r.resolved_path = "/w/a";
  r.tool_call_id = "call-1";
  r.tool_name = "bash";
  r.skill_name = "skill";
  r.tool_input_preview = "preview";
  r.agent_name = "worker";
  r.matched_policy = MatchedPolicy{};
  const auto back = from_json(to_json(r));
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, r);
  const auto parsed = parse_boundary_request(to_json(r).dump(2));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, r);
}

TEST(BoundaryRequest, FromJsonErrors) {
  const json good = to_json(network_request());
  const auto error_of = [](const json& j) {
    const auto r = from_json(j);
    return r ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(error_of(json::array()), "boundary request must be a JSON object");
  json j = good;
  j["extra"] = 1;
  EXPECT_EQ(error_of(j), "boundary request has unknown field \"extra\"");
  j = good;
  j.erase("source");
  EXPECT_EQ(error_of(j), "boundary request source must be a non-empty string");
  j = good;
  j["operation"] = 5;
  EXPECT_EQ(error_of(j), "boundary request operation must be a non-empty string");
  j = good;
  j["surface"] = "";
  EXPECT_EQ(error_of(j), "boundary request surface must be a non-empty string");
  j = good;
  j["surface"] = "socket";
  EXPECT_EQ(error_of(j),
            "boundary request surface must be one of network, host-ipc, filesystem-read, "
            "filesystem-write, credential");
  j = good;
  j["path"] = nullptr;
  EXPECT_EQ(error_of(j), "boundary request path must be a string");
  j = good;
  j["agentName"] = json::array();
  EXPECT_EQ(error_of(j), "boundary request agentName must be a string");
  const std::string policy_error =
      R"(boundary request matchedPolicy must be {"decision": "ask", "rule"?: string})";
  for (const json& policy :
       {json("ask"), json::object(), json({{"decision", "allow"}}),
        json({{"decision", "ask"}, {"rule", 1}}), json({{"decision", "ask"}, {"other", "x"}})}) {
    j = good;
    j["matchedPolicy"] = policy;
    EXPECT_EQ(error_of(j), policy_error) << policy.dump();
  }
  j = good;
  j["matchedPolicy"] = {{"decision", "ask"}};
  EXPECT_EQ(error_of(j), "ok");
}

TEST(BoundaryRequest, ParseRejectsBadText) {
  for (const char* text :
       {"", "{", R"({"id":"a"} x)", R"({"id":"a"}{"id":"b"})", R"({"id":"a","id":"b"})"}) {
    const auto r = parse_boundary_request(text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_TRUE(r.error().message.starts_with("boundary request is not valid JSON: "))
        << r.error().message;
  }
  EXPECT_EQ(parse_boundary_request(R"({"id":"a","id":"b"})").error().message,
            "boundary request is not valid JSON: duplicate key \"id\"");
}

// --- canonical JSON and hash --------------------------------------------------------------

TEST(RequestHash, KnownAnswer) {
  // Expected values from `printf '%s' '<canonical json>' | sha256sum`, and equal to
  // JSON.stringify over recursively sorted keys with `id` removed (the reference).
  BoundaryRequest r = network_request();
  r.agent_name = "worker";
  r.matched_policy = MatchedPolicy{"network.ask"};
  EXPECT_EQ(canonical_json(r),
            R"({"agentName":"worker","command":"curl https://example.com","cwd":"/home/u/ws",)"
            R"("destination":"example.com:443","matchedPolicy":{"decision":"ask",)"
            R"("rule":"network.ask"},"operation":"connect","source":"sandbox-runtime",)"
            R"("surface":"network"})");
  EXPECT_EQ(hash_of(r), "6931c2ca793fe7cd414cdfbc8e58fa336cf1a213ef1c8058dcd20232d99bc875");

  BoundaryRequest minimal;
  minimal.id = "y";
  minimal.source = "sandbox-runtime";
  minimal.operation = "connect";
  minimal.cwd = "/w";
  EXPECT_EQ(canonical_json(minimal),
            R"({"cwd":"/w","operation":"connect","source":"sandbox-runtime","surface":"network"})");
  EXPECT_EQ(hash_of(minimal), "854679e29d8511ae40679cc620383009e12bda17105b03c6d07af506f08981d1");
}

TEST(RequestHash, EscapesLikeJsonStringify) {
  BoundaryRequest r;
  r.id = "z";
  r.source = "sandbox-runtime";
  r.surface = Surface::HostIpc;
  r.operation = "execute-host";
  r.cwd = "/w";
  r.command = "echo \"h\xc3\xa9\"\n\ttab\x01";
  EXPECT_EQ(canonical_json(r),
            "{\"command\":\"echo \\\"h\xc3\xa9\\\"\\n\\ttab\\u0001\",\"cwd\":\"/w\","
            "\"operation\":\"execute-host\",\"source\":\"sandbox-runtime\",\"surface\":"
            "\"host-ipc\"}");
  EXPECT_EQ(hash_of(r), "8acdcd9c617c062b0d4a8cd0899488a45b1ee30bb06b7661b95048cc5edb3c1c");
}

TEST(RequestHash, IsLowercaseHexOf64Digits) {
  const std::string hash = hash_of(network_request());
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(RequestHash, FieldOrderOfTheInputDoesNotMatter) {
  const auto a = parse_boundary_request(
      R"({"id":"1","source":"s","surface":"network","operation":"connect","cwd":"/w",)"
      R"("destination":"h:1","matchedPolicy":{"rule":"r","decision":"ask"}})");
  const auto b = parse_boundary_request(
      R"({"matchedPolicy":{"decision":"ask","rule":"r"},"destination":"h:1","cwd":"/w",)"
      R"("operation":"connect","surface":"network","source":"s","id":"1"})");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(hash_of(*a), hash_of(*b));
}

TEST(RequestHash, IdIsIgnored) {
  BoundaryRequest a = network_request();
  BoundaryRequest b = network_request();
  b.id = "another-id";
  EXPECT_EQ(canonical_json(a), canonical_json(b));
  EXPECT_EQ(hash_of(a), hash_of(b));
}

TEST(RequestHash, AbsentAndEmptyDiffer) {
  BoundaryRequest a = network_request();
  BoundaryRequest b = network_request();
  b.path = "";
  EXPECT_NE(hash_of(a), hash_of(b));
  BoundaryRequest c = network_request();
  c.matched_policy = MatchedPolicy{};
  BoundaryRequest d = network_request();
  d.matched_policy = MatchedPolicy{""};
  EXPECT_NE(hash_of(a), hash_of(c));
  EXPECT_NE(hash_of(c), hash_of(d));
}

TEST(RequestHash, ChangingAnyOtherFieldChangesTheHash) {
  BoundaryRequest base = network_request();
  base.path = "p";
  base.resolved_path = "rp";
  base.tool_call_id = "tc";
  base.tool_name = "tn";
  base.skill_name = "sn";
  base.tool_input_preview = "tip";
  base.agent_name = "an";
  base.matched_policy = MatchedPolicy{"rule"};
  const std::string original = hash_of(base);
  const std::vector<std::function<void(BoundaryRequest&)>> changes = {
      [](auto& r) { r.source += "x"; },
      [](auto& r) { r.surface = Surface::HostIpc; },
      [](auto& r) { r.operation += "x"; },
      [](auto& r) { r.cwd += "x"; },
      [](auto& r) { *r.command += " "; },
      [](auto& r) { *r.path += "x"; },
      [](auto& r) { *r.resolved_path += "x"; },
      [](auto& r) { *r.destination = "example.com:444"; },
      [](auto& r) { *r.tool_call_id += "x"; },
      [](auto& r) { *r.tool_name += "x"; },
      [](auto& r) { *r.skill_name += "x"; },
      [](auto& r) { *r.tool_input_preview += "x"; },
      [](auto& r) { *r.agent_name += "x"; },
      [](auto& r) { r.matched_policy->rule = "other"; },
      [](auto& r) { r.matched_policy->rule.reset(); },
      [](auto& r) { r.matched_policy.reset(); },
      [](auto& r) { r.agent_name.reset(); },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    BoundaryRequest changed = base;
    changes[i](changed);
    EXPECT_NE(hash_of(changed), original) << "change " << i;
  }
}

// --- grants --------------------------------------------------------------------------------

TEST(GrantStore, IssuesRandomTokensBoundToTheRequest) {
  ManualClock clock;
  GrantStore store(clock, 60s);
  const auto a = store.issue(network_request(), "session-1");
  const auto b = store.issue(network_request(), "session-1");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->token.size(), 32u);
  EXPECT_EQ(a->token.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a->token, b->token);
  EXPECT_EQ(a->request_hash, hash_of(network_request()));
  EXPECT_EQ(a->session_id, "session-1");
  EXPECT_EQ(a->expires_at, clock.now() + 60s);
  EXPECT_EQ(store.size(), 2u);
}

TEST(GrantStore, IsSingleUse) {
  ManualClock clock;
  GrantStore store(clock);
  const auto grant = store.issue(network_request(), "s");
  ASSERT_TRUE(grant);
  EXPECT_TRUE(store.consume(network_request(), "s", grant->token));
  EXPECT_FALSE(store.consume(network_request(), "s", grant->token));
  EXPECT_EQ(store.size(), 0u);
}

TEST(GrantStore, ExpiresAtExactlyTheTtl) {
  ManualClock clock;
  GrantStore store(clock, 60s);
  const auto early = store.issue(network_request(), "s");
  const auto late = store.issue(network_request(), "s");
  ASSERT_TRUE(early && late);
  clock.advance(60s - 1ns);
  EXPECT_TRUE(store.consume(network_request(), "s", early->token));
  clock.advance(1ns);  // now == expires_at: expired
  EXPECT_FALSE(store.consume(network_request(), "s", late->token));
  EXPECT_EQ(store.size(), 0u);  // pruned
}

TEST(GrantStore, PrunesExpiredGrantsOnIssue) {
  ManualClock clock;
  GrantStore store(clock, 1s);
  ASSERT_TRUE(store.issue(network_request(), "s"));
  clock.advance(1s);
  ASSERT_TRUE(store.issue(network_request(), "s"));
  EXPECT_EQ(store.size(), 1u);
}

TEST(GrantStore, RejectsWrongSessionTokenOrRequest) {
  ManualClock clock;
  GrantStore store(clock);
  const auto grant = store.issue(network_request(), "s");
  ASSERT_TRUE(grant);
  EXPECT_FALSE(store.consume(network_request(), "other-session", grant->token));
  EXPECT_FALSE(store.consume(network_request(), "s", ""));
  EXPECT_FALSE(store.consume(network_request(), "s", "0123456789abcdef0123456789abcdef"));
  std::string wrong_token = grant->token;
  wrong_token.back() = wrong_token.back() == '0' ? '1' : '0';
  EXPECT_FALSE(store.consume(network_request(), "s", wrong_token));
  BoundaryRequest changed = network_request();
  changed.destination = "example.com:80";
  EXPECT_FALSE(store.consume(changed, "s", grant->token));
  changed = network_request();
  changed.agent_name = "";
  EXPECT_FALSE(store.consume(changed, "s", grant->token));
  // A mismatch leaves the grant in place (deleted on success only, compatibility C74).
  BoundaryRequest renamed = network_request();
  renamed.id = "another-id";  // not part of the hash
  EXPECT_TRUE(store.consume(renamed, "s", grant->token));
}

TEST(GrantStore, RejectsInvalidRequestsAndSessions) {
  ManualClock clock;
  GrantStore store(clock);
  BoundaryRequest bad = network_request();
  bad.cwd = " ";
  EXPECT_EQ(store.issue(bad, "s").error().message,
            "boundary request cwd must be a non-empty string");
  EXPECT_EQ(store.issue(network_request(), "").error().message,
            "session id must be a non-empty string");
  const auto grant = store.issue(network_request(), "s");
  ASSERT_TRUE(grant);
  EXPECT_FALSE(store.consume(bad, "s", grant->token));
}

TEST(GrantStore, ClampsTheTtl) {
  ManualClock clock;
  EXPECT_EQ(GrantStore(clock, 0s).ttl(), 1s);
  EXPECT_EQ(GrantStore(clock, 301s).ttl(), 300s);
  EXPECT_EQ(GrantStore(clock).ttl(), 60s);
  EXPECT_EQ(kInvalidGrantReason, "The exact one-shot grant is missing, invalid, or expired.");
}

// --- circuit breaker -------------------------------------------------------------------------

TEST(CircuitBreaker, TripsAfterThreeConsecutiveDenials) {
  CircuitBreaker breaker;
  breaker.record("turn", ReviewOutcome::Deny);
  breaker.record("turn", ReviewOutcome::Deny);
  EXPECT_FALSE(breaker.tripped("turn"));
  breaker.record("turn", ReviewOutcome::Deny);
  EXPECT_TRUE(breaker.tripped("turn"));
  EXPECT_EQ(kCircuitBreakerReason, "Automatic review stopped after repeated denials in this turn.");
}

TEST(CircuitBreaker, AllowsAndDefersResetTheRun) {
  for (ReviewOutcome reset : {ReviewOutcome::Allow, ReviewOutcome::Defer}) {
    CircuitBreaker breaker;
    for (int i = 0; i < 4; ++i) {
      breaker.record("turn", ReviewOutcome::Deny);
      breaker.record("turn", ReviewOutcome::Deny);
      breaker.record("turn", reset);
    }
    EXPECT_FALSE(breaker.tripped("turn")) << to_string(reset);  // 8 denials, never 3 in a row
  }
}

TEST(CircuitBreaker, TripsAtTenDenialsAmongTheLastFifty) {
  CircuitBreaker breaker;
  for (int i = 0; i < 9; ++i) {
    breaker.record("turn", ReviewOutcome::Deny);
    breaker.record("turn", ReviewOutcome::Allow);
    breaker.record("turn", ReviewOutcome::Defer);
  }
  EXPECT_FALSE(breaker.tripped("turn"));
  breaker.record("turn", ReviewOutcome::Deny);
  EXPECT_TRUE(breaker.tripped("turn"));
}

TEST(CircuitBreaker, DenialsOlderThanTheWindowDoNotCount) {
  CircuitBreaker breaker;
  for (int i = 0; i < 9; ++i) {  // 9 denials, then 41 allows: the window is full
    breaker.record("turn", ReviewOutcome::Deny);
    breaker.record("turn", ReviewOutcome::Allow);
  }
  for (int i = 0; i < 32; ++i) breaker.record("turn", ReviewOutcome::Allow);
  // The oldest denial leaves the window as this one enters: still 9 of the last 50.
  breaker.record("turn", ReviewOutcome::Deny);
  EXPECT_FALSE(breaker.tripped("turn"));
  breaker.record("turn", ReviewOutcome::Allow);  // drops the 2nd oldest entry (an allow)
  breaker.record("turn", ReviewOutcome::Deny);   // drops a denial, adds one
  EXPECT_FALSE(breaker.tripped("turn"));
}

TEST(CircuitBreaker, ScopesAreIndependentAndTrippingSticks) {
  CircuitBreaker breaker;
  for (int i = 0; i < 3; ++i) breaker.record("turn:1", ReviewOutcome::Deny);
  breaker.record("turn:2", ReviewOutcome::Deny);
  EXPECT_TRUE(breaker.tripped("turn:1"));
  EXPECT_FALSE(breaker.tripped("turn:2"));
  EXPECT_FALSE(breaker.tripped("never-seen"));
  breaker.record("turn:1", ReviewOutcome::Allow);
  EXPECT_TRUE(breaker.tripped("turn:1"));  // cleared only by clear()
  breaker.clear("turn:1");
  EXPECT_FALSE(breaker.tripped("turn:1"));
  for (int i = 0; i < 3; ++i) breaker.record("turn:1", ReviewOutcome::Deny);
  breaker.clear();
  EXPECT_FALSE(breaker.tripped("turn:1"));
}

TEST(CircuitBreaker, LimitsAreConfigurable) {
  CircuitBreaker breaker(CircuitBreakerLimits{.consecutive_denials = 1});
  breaker.record("x", ReviewOutcome::Deny);
  EXPECT_TRUE(breaker.tripped("x"));
}

// --- results -----------------------------------------------------------------------------

TEST(ApprovalResult, Names) {
  EXPECT_EQ(to_string(Action::Allow), "allow");
  EXPECT_EQ(to_string(Action::Deny), "deny");
  EXPECT_EQ(to_string(Source::HardDeny), "hard-deny");
  EXPECT_EQ(to_string(Source::InvalidGrant), "invalid-grant");
  for (Source s : {Source::HardDeny, Source::Reviewer, Source::Human, Source::Unavailable,
                   Source::InvalidGrant}) {
    EXPECT_EQ(source_from_string(to_string(s)), s);
  }
  for (ReviewOutcome o : {ReviewOutcome::Allow, ReviewOutcome::Deny, ReviewOutcome::Defer}) {
    EXPECT_EQ(review_outcome_from_string(to_string(o)), o);
  }
  EXPECT_EQ(action_from_string("deny"), Action::Deny);
  EXPECT_FALSE(action_from_string("Allow"));
  EXPECT_FALSE(source_from_string("hard_deny"));
  EXPECT_FALSE(review_outcome_from_string(""));
}

// --- audit ---------------------------------------------------------------------------------

std::chrono::system_clock::time_point may_first_2024() {
  using namespace std::chrono;
  return sys_days{year{2024} / 5 / 1} + 12h + 34min + 56s + 789ms + 999us;
}

TEST(Audit, Rfc3339) {
  EXPECT_EQ(rfc3339_utc(may_first_2024()), "2024-05-01T12:34:56.789Z");
  EXPECT_EQ(rfc3339_utc(std::chrono::system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
}

TEST(Audit, ReviewDecisionLine) {
  const ApprovalResult result{Action::Deny, Source::Reviewer, "too risky\nreally"};
  const std::string line = audit_line(AuditEvent::ReviewDecision, network_request(),
                                      details_of(result), may_first_2024());
  ASSERT_TRUE(line.ends_with("\n"));
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line, R"({"time":"2024-05-01T12:34:56.789Z","event":"review_decision",)"
                  R"("request_hash":")" +
                      hash_of(network_request()) +
                      R"(","surface":"network","destination":"example.com:443",)"
                      R"("action":"deny","source":"reviewer","reason":"too risky\nreally",)"
                      R"("command":"curl https://example.com"})"
                      "\n");
}

TEST(Audit, TargetIsDestinationThenCommandThenPath) {
  BoundaryRequest r = network_request();
  r.destination.reset();
  const auto parsed = [&] {
    return json::parse(audit_line(AuditEvent::GrantIssued, r, {}, may_first_2024()));
  };
  EXPECT_EQ(parsed().at("command"), "curl https://example.com");
  EXPECT_FALSE(parsed().contains("destination"));
  EXPECT_EQ(parsed().size(), 5u);  // the command once, as the target
  r.command.reset();
  r.path = "a";
  EXPECT_EQ(parsed().at("path"), "a");
  r.resolved_path = "/w/a";
  EXPECT_EQ(parsed().at("path"), "/w/a");
  EXPECT_FALSE(parsed().contains("source"));
  EXPECT_FALSE(parsed().contains("reason"));
  EXPECT_FALSE(parsed().contains("action"));
  EXPECT_EQ(parsed().at("event"), "grant_issued");
}

TEST(Audit, EventNamesAndBadBytes) {
  EXPECT_EQ(to_string(AuditEvent::HardDeny), "hard_deny");
  EXPECT_EQ(to_string(AuditEvent::GrantConsumed), "grant_consumed");
  EXPECT_EQ(to_string(AuditEvent::GrantRejected), "grant_rejected");
  BoundaryRequest r = network_request();
  r.destination.reset();
  r.command = "echo \xff";
  const std::string line = audit_line(
      AuditEvent::HardDeny, r, AuditDetails{Action::Deny, "hard-deny", "x"}, may_first_2024());
  const json j = json::parse(line);
  EXPECT_EQ(j.at("command"), "echo \xef\xbf\xbd");
  EXPECT_EQ(j.at("request_hash"), hash_of(r));
}

}  // namespace
}  // namespace pisandbox::approval
