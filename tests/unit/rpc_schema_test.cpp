// What src/rpc builds (every event kind and variant) and accepts (every request, with every
// field) against docs/protocol.schema.json, both ways: a field that one side has and the other
// lacks fails here, whether it was added to the schema or to the code.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "json_schema.hpp"
#include "protocol_schema.hpp"
#include "rpc/protocol.hpp"

namespace pisandbox::rpc {
namespace {

using nlohmann::json;

const testing::JsonSchema& schema() {
  static const testing::JsonSchema parsed(json::parse(kProtocolSchema));
  return parsed;
}

/// Every event src/rpc builds, with each optional field present in at least one.
std::vector<std::string> built_events() {
  return {
      hello_event("pi-sandbox 0.2.0", "linux"),
      started_event("c1"),
      output_event("c1", false, "text\n"),
      output_event("c1", true, std::string("\xff\xfe", 2)),
      denied_event("c1", "network", "example.com:443", "Denied by the user.", "human"),
      denied_event("c1", "host-ipc", "printf x", "no", "policy"),
      denied_event("c1", "network", "paste.example:443", "Exfiltration.", "reviewer",
                   "break-glass"),
      approval_settled_event("c1", "r-1", Choice::AllowSession, "human", "covered"),
      approval_settled_event("c1", "r-1", Choice::Deny, "unavailable", ""),
      exit_event("c1", {0, std::nullopt, "", "", ""}),
      exit_event("c1", {std::nullopt, 9, "", "", "memory"}),
      exit_event("c1", {std::nullopt, std::nullopt, "timeout", "command timed out", ""}),
      exit_event("c1", {std::nullopt, std::nullopt, "aborted", "", "pids"}),
      error_event("unknown request type \"x\""),
      error_event("unknown command id \"c9\"", "c9"),
      recent_denials_event({{std::string(64, 'a'), "retry", "network", "a.test:443", "No."}}),
      recent_denials_event(
          {{std::string(64, 'b'), "break-glass", "network", "a.test:443", "No.", "curl a.test"}}),
      recent_denials_event({}),
      override_event(std::string(64, 'a'), "retry", 60),
  };
}

TEST(ProtocolSchema, EveryEventSrcRpcBuildsValidates) {
  for (const auto& line : built_events()) {
    const json event = json::parse(line);
    const std::string def = event["type"].get<std::string>() + "_event";
    EXPECT_EQ(schema().check(event, def), "") << line;
    EXPECT_EQ(schema().check(event, "event"), "") << line;
    EXPECT_EQ(schema().check(event), "") << line;
  }
}

// The other way: every field the schema lists for an event src/rpc builds is one it writes.
// (`approval_request` is built by serve's worker, serve/worker_io.cpp; integration_serve
// checks every event the real serve writes against the schema.)
TEST(ProtocolSchema, EveryEventFieldOfTheSchemaIsOneSrcRpcWrites) {
  std::map<std::string, std::set<std::string>> written;
  for (const auto& line : built_events()) {
    const json event = json::parse(line);
    for (const auto& [field, _] : event.items())
      written[event["type"].get<std::string>() + "_event"].insert(field);
  }
  for (const auto& [def, fields] : written) EXPECT_EQ(fields, schema().properties(def)) << def;
  std::set<std::string> events;
  for (const auto& option : schema().definition("event")["oneOf"])
    events.insert(option["$ref"].get<std::string>().substr(std::string("#/$defs/").size()));
  events.erase("approval_request_event");
  std::set<std::string> built;
  for (const auto& [def, _] : written) built.insert(def);
  EXPECT_EQ(built, events);
}

/// A request of each type with every field the schema lists (and the variants of exec).
std::map<std::string, std::vector<json>> full_requests() {
  return {
      {"hello_request", {{{"type", "hello"}, {"version", 1}}}},
      {"exec_request",
       {{{"type", "exec"},
         {"id", "c1"},
         {"command", "ls"},
         {"cwd", "/w"},
         {"env", {{"A", "1"}}},
         {"timeout_s", 2.5},
         {"scope_key", "s"},
         {"agent_name", "sub"},
         {"env_keep", {"OPENAI_API_KEY"}},
         {"approval_command", "sub: t"},
         {"stdin", "pipe"},
         {"stderr", "stdout"}},
        {{"type", "exec"}, {"id", "c2"}, {"argv", {"/bin/true"}}, {"cwd", "/w"}}}},
      {"stdin_request",
       {{{"type", "stdin"}, {"id", "c1"}, {"data", "aGk="}, {"encoding", "base64"}}}},
      {"stdin_close_request", {{{"type", "stdin_close"}, {"id", "c1"}}}},
      {"abort_request", {{{"type", "abort"}, {"id", "c1"}}}},
      {"approval_response",
       {{{"type", "approval_response"},
         {"id", "c1"},
         {"request_id", "r-1"},
         {"choice", "deny"},
         {"source", "reviewer"},
         {"reason", "no"}}}},
      {"shutdown_request", {{{"type", "shutdown"}}}},
      {"recent_denials_request", {{{"type", "recent_denials"}}}},
      {"override_request",
       {{{"type", "override"},
         {"request_hash", std::string(64, 'a')},
         {"kind", "break-glass"},
         {"scope_key", "s:turn:2"}},
        {{"type", "override"}, {"request_hash", std::string(64, 'b')}, {"kind", "retry"}}}},
  };
}

TEST(ProtocolSchema, EveryRequestOfTheSchemaIsAcceptedWithEveryField) {
  std::set<std::string> defs;
  for (const auto& [def, requests] : full_requests()) {
    defs.insert(def);
    std::set<std::string> fields;
    for (const auto& request : requests) {
      EXPECT_EQ(schema().check(request, def), "") << request.dump();
      EXPECT_EQ(schema().check(request, "request"), "") << request.dump();
      const auto parsed = parse_request(request.dump());
      EXPECT_TRUE(parsed) << request.dump() << ": " << parsed.error().message;
      for (const auto& [field, _] : request.items()) fields.insert(field);
    }
    EXPECT_EQ(fields, schema().properties(def)) << def;
  }
  std::set<std::string> requests;
  for (const auto& option : schema().definition("request")["oneOf"])
    requests.insert(option["$ref"].get<std::string>().substr(std::string("#/$defs/").size()));
  EXPECT_EQ(defs, requests);
}

// exec_line() hands serve's worker the exec request as src/rpc understood it: every field it
// took comes back, and nothing the schema does not list.
TEST(ProtocolSchema, AnExecRoundTripsThroughSrcRpcWithEverySchemaField) {
  std::set<std::string> fields;
  const auto requests = full_requests();
  for (const auto& request : requests.at("exec_request")) {
    const auto parsed = parse_request(request.dump());
    ASSERT_TRUE(parsed);
    const json line = json::parse(exec_line(std::get<Exec>(*parsed)));
    EXPECT_EQ(schema().check(line, "exec_request"), "") << line.dump();
    for (const auto& [field, _] : line.items()) fields.insert(field);
  }
  EXPECT_EQ(fields, schema().properties("exec_request"));
}

// What the schema refuses src/rpc refuses too.
TEST(ProtocolSchema, RequestsTheSchemaRefusesAreRefused) {
  const std::vector<std::string> refused = {
      R"({"type":"launch"})",
      R"({"type":"hello"})",
      R"({"type":"exec","id":"x","command":"true"})",
      R"({"type":"exec","id":"x","command":"true","cwd":"relative"})",
      R"({"type":"exec","id":"x","command":"true","argv":["true"],"cwd":"/"})",
      R"({"type":"exec","id":"x","argv":[],"cwd":"/"})",
      R"({"type":"exec","id":"x","command":"true","cwd":"/","stdin":"tty"})",
      R"({"type":"exec","id":"x","command":"true","cwd":"/","stderr":"both"})",
      R"({"type":"exec","id":"x","command":"true","cwd":"/","timeout_s":0})",
      R"({"type":"exec","id":"x","command":"true","cwd":"/","env_keep":["A*"]})",
      R"({"type":"exec","id":"","command":"true","cwd":"/"})",
      R"({"type":"abort"})",
      R"({"type":"approval_response","id":"x","request_id":"r","choice":"maybe"})",
      R"({"type":"approval_response","id":"x","request_id":"r","choice":"deny","source":"me"})",
  };
  for (const auto& line : refused) {
    EXPECT_NE(schema().check(json::parse(line), "request"), "") << line;
    EXPECT_FALSE(parse_request(line)) << line;
  }
}

}  // namespace
}  // namespace pisandbox::rpc
