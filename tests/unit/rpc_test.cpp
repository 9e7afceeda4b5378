// The serve protocol (docs/protocol.md): every request form, every error message, the
// events' exact bytes, UTF-8 framing and line splitting.
#include <gtest/gtest.h>

#include "rpc/protocol.hpp"

namespace pisandbox::rpc {
namespace {

std::string error_of(std::string_view line) {
  auto r = parse_request(line);
  return r ? std::string("(parsed)") : r.error().message;
}

TEST(Requests, ExecWithEveryField) {
  auto r = parse_request(
      R"({"type":"exec","id":"c1","command":"ls -l","cwd":"/w","env":{"A":"1"},"timeout_s":2.5,)"
      R"("scope_key":"s:turn:1","agent_name":"sub","stdin":"pipe","extra":true,)"
      R"("env_keep":["OPENAI_API_KEY","A_1","OPENAI_API_KEY"],"approval_command":"sub: t"})");
  ASSERT_TRUE(r) << r.error().message;
  const Exec& e = std::get<Exec>(*r);
  EXPECT_EQ(e.id, "c1");
  EXPECT_EQ(e.command, "ls -l");
  EXPECT_TRUE(e.argv.empty());
  EXPECT_EQ(e.cwd, "/w");
  EXPECT_EQ(e.env, (std::map<std::string, std::string>{{"A", "1"}}));
  EXPECT_EQ(e.timeout_s, 2.5);
  EXPECT_EQ(e.scope_key, "s:turn:1");
  EXPECT_EQ(e.agent_name, "sub");
  EXPECT_TRUE(e.stdin_pipe);
  EXPECT_EQ(e.env_keep, (std::vector<std::string>{"OPENAI_API_KEY", "A_1"}));
  EXPECT_EQ(e.approval_command, "sub: t");
  EXPECT_EQ(exec_line(e),
            R"({"type":"exec","id":"c1","cwd":"/w","command":"ls -l","env":{"A":"1"},)"
            R"("timeout_s":2.5,"scope_key":"s:turn:1","agent_name":"sub",)"
            R"("env_keep":["OPENAI_API_KEY","A_1"],"approval_command":"sub: t","stdin":"pipe"})"
            "\n");
}

TEST(Requests, ExecWithArgvAndDefaults) {
  auto r = parse_request(R"({"type":"exec","id":"c2","argv":["/bin/echo","a b"],"cwd":"/"})"
                         "\r");
  ASSERT_TRUE(r);
  const Exec& e = std::get<Exec>(*r);
  EXPECT_EQ(e.argv, (std::vector<std::string>{"/bin/echo", "a b"}));
  EXPECT_FALSE(e.command);
  EXPECT_FALSE(e.env);
  EXPECT_FALSE(e.timeout_s);
  EXPECT_FALSE(e.stdin_pipe);
  EXPECT_FALSE(e.stderr_to_stdout);
}

TEST(Requests, ExecWithStderrIntoStdout) {
  auto r = parse_request(R"({"type":"exec","id":"c3","command":"x","cwd":"/","stderr":"stdout"})");
  ASSERT_TRUE(r) << r.error().message;
  const Exec& e = std::get<Exec>(*r);
  EXPECT_TRUE(e.stderr_to_stdout);
  EXPECT_EQ(
      exec_line(e),
      R"({"type":"exec","id":"c3","cwd":"/","command":"x","stdin":"closed","stderr":"stdout"})"
      "\n");
  auto separate =
      parse_request(R"({"type":"exec","id":"c4","command":"x","cwd":"/","stderr":"separate"})");
  ASSERT_TRUE(separate);
  EXPECT_FALSE(std::get<Exec>(*separate).stderr_to_stdout);
}

TEST(Requests, EnvKeepHoldsExactNamesOnly) {
  for (const char* keep : {R"("A_KEY")", R"(["*KEY*"])", R"(["1A"])", R"([""])", R"([1])",
                           R"(["A=B"])", R"(["A-B"])"}) {
    EXPECT_EQ(error_of(std::string(R"({"type":"exec","id":"c1","command":"x","cwd":"/",)") +
                       R"("env_keep":)" + keep + "}"),
              R"(exec "c1": "env_keep" must be an array of variable names)")
        << keep;
  }
}

TEST(Requests, TheSmallOnes) {
  EXPECT_EQ(std::get<Hello>(*parse_request(R"({"type":"hello","version":1})")).version, 1);
  EXPECT_TRUE(std::holds_alternative<Shutdown>(*parse_request(R"({"type":"shutdown"})")));
  EXPECT_EQ(std::get<Abort>(*parse_request(R"({"type":"abort","id":"c1"})")).id, "c1");
  EXPECT_EQ(std::get<StdinClose>(*parse_request(R"({"type":"stdin_close","id":"c1"})")).id, "c1");
  EXPECT_EQ(std::get<StdinData>(*parse_request(R"({"type":"stdin","id":"c1","data":"hi\n"})")).data,
            "hi\n");
  EXPECT_EQ(std::get<StdinData>(
                *parse_request(R"({"type":"stdin","id":"c1","data":"AP8=","encoding":"base64"})"))
                .data,
            std::string("\0\xff", 2));
  const auto response = std::get<ApprovalResponse>(*parse_request(
      R"({"type":"approval_response","id":"c1","request_id":"r2","choice":"allow-command"})"));
  EXPECT_EQ(response.request_id, "r2");
  EXPECT_EQ(response.choice, Choice::AllowCommand);
  EXPECT_FALSE(response.source);
  EXPECT_FALSE(response.reason);
}

TEST(Requests, ApprovalResponsesCarryTheirChoiceSourceAndReason) {
  const auto session = std::get<ApprovalResponse>(*parse_request(
      R"({"type":"approval_response","id":"c","request_id":"r","choice":"allow-session",)"
      R"("source":"reviewer","reason":"Known registry."})"));
  EXPECT_EQ(session.choice, Choice::AllowSession);
  EXPECT_EQ(session.source, "reviewer");
  EXPECT_EQ(session.reason, "Known registry.");
  const auto nobody = std::get<ApprovalResponse>(
      *parse_request(R"({"type":"approval_response","id":"c","request_id":"r","choice":"deny",)"
                     R"("source":"unavailable","reason":"No UI."})"));
  EXPECT_EQ(nobody.choice, Choice::Deny);
  EXPECT_EQ(nobody.source, "unavailable");
  EXPECT_EQ(nobody.reason, "No UI.");
  for (const char* source : {"human", "reviewer", "unavailable", "hard-deny", "invalid-grant"}) {
    const std::string line =
        R"({"type":"approval_response","id":"c","request_id":"r","choice":"deny","source":")" +
        std::string(source) + R"("})";
    EXPECT_EQ(std::get<ApprovalResponse>(*parse_request(line)).source, source);
  }
  // The longest reason is accepted, one byte more is not.
  const std::string longest(kMaxReasonBytes, 'x');
  const std::string prefix =
      R"({"type":"approval_response","id":"c","request_id":"r","choice":"deny","reason":")";
  EXPECT_EQ(std::get<ApprovalResponse>(*parse_request(prefix + longest + R"("})")).reason, longest);
  EXPECT_EQ(error_of(prefix + longest + R"(x"})"),
            "approval_response \"c\": \"reason\" must be a string of at most 4096 bytes");
  EXPECT_EQ(to_string(Choice::Deny), "deny");
  EXPECT_EQ(to_string(Choice::AllowOnce), "allow-once");
  EXPECT_EQ(to_string(Choice::AllowCommand), "allow-command");
  EXPECT_EQ(to_string(Choice::AllowSession), "allow-session");
}

TEST(Requests, EveryErrorNamesTheProblem) {
  EXPECT_TRUE(error_of("{").starts_with("line is not valid JSON: "));
  EXPECT_TRUE(error_of("2E7772E").starts_with("line is not valid JSON: "));  // found by fuzzing
  EXPECT_EQ(error_of("[]"), "request must be a JSON object");
  EXPECT_EQ(error_of(R"({"type":3})"), "request has no string \"type\"");
  EXPECT_EQ(error_of(R"({"type":"run"})"), "unknown request type \"run\"");
  EXPECT_EQ(error_of(R"({"type":"hello"})"), "hello needs an integer \"version\"");
  EXPECT_EQ(error_of(R"({"type":"exec","command":"x","cwd":"/"})"), "exec needs a string \"id\"");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","cwd":"/"})"),
            "exec \"a\": needs \"command\" or \"argv\", not both");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","argv":["y"],"cwd":"/"})"),
            "exec \"a\": needs \"command\" or \"argv\", not both");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","argv":[],"cwd":"/"})"),
            "exec \"a\": \"argv\" must be a non-empty array of strings");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"rel"})"),
            "exec \"a\": \"cwd\" must be an absolute path");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","env":{"A":1}})"),
            "exec \"a\": \"env\" must be an object of strings");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","env":{"A=B":"1"}})"),
            "exec \"a\": \"env\" must be an object of strings");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","env":{"A":"x\u0000y"}})"),
            "exec \"a\": \"env\" must be an object of strings");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","timeout_s":0})"),
            "exec \"a\": \"timeout_s\" must be a positive number of seconds, at most "
            "1000000000");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","stdin":"open"})"),
            "exec \"a\": \"stdin\" must be \"closed\" or \"pipe\"");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","stderr":"merged"})"),
            "exec \"a\": \"stderr\" must be \"separate\" or \"stdout\"");
  EXPECT_EQ(error_of(R"({"type":"exec","id":"a","command":"x","cwd":"/","scope_key":1})"),
            "exec \"a\": \"scope_key\" must be a string");
  EXPECT_EQ(error_of(R"({"type":"stdin","id":"a"})"), "stdin \"a\": \"data\" must be a string");
  EXPECT_EQ(error_of(R"({"type":"stdin","id":"a","data":"*","encoding":"base64"})"),
            "stdin \"a\": \"data\" is not valid base64");
  EXPECT_EQ(error_of(R"({"type":"approval_response","id":"a","choice":"deny"})"),
            "approval_response needs a string \"request_id\"");
  EXPECT_EQ(error_of(R"({"type":"approval_response","id":"a","request_id":"r","choice":"yes"})"),
            "approval_response \"a\": \"choice\" must be \"deny\", \"allow-once\", "
            "\"allow-command\" or \"allow-session\"");
  const std::string sources =
      "approval_response \"a\": \"source\" must be one of \"human\", \"reviewer\", "
      "\"unavailable\", \"hard-deny\", \"invalid-grant\"";
  EXPECT_EQ(error_of(R"({"type":"approval_response","id":"a","request_id":"r","choice":"deny",)"
                     R"("source":"user"})"),
            sources);
  EXPECT_EQ(error_of(R"({"type":"approval_response","id":"a","request_id":"r","choice":"deny",)"
                     R"("source":1})"),
            sources);
  for (const std::string source : {"unavailable", "hard-deny", "invalid-grant"})
    EXPECT_EQ(
        error_of(R"({"type":"approval_response","id":"a","request_id":"r","choice":"allow-once",)"
                 R"("source":")" +
                 source + R"("})"),
        "approval_response \"a\": \"source\" must be \"human\" or \"reviewer\" for an allow");
  EXPECT_EQ(error_of(R"({"type":"approval_response","id":"a","request_id":"r","choice":"deny",)"
                     R"("reason":["no"]})"),
            "approval_response \"a\": \"reason\" must be a string of at most 4096 bytes");
  auto r = parse_request(R"({"type":"abort","id":""})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "abort needs a string \"id\"");
}

TEST(Events, ExactBytes) {
  EXPECT_EQ(hello_event("pi-sandbox 0.1.0", "linux"),
            "{\"type\":\"hello\",\"version\":1,\"server\":\"pi-sandbox 0.1.0\",\"sandbox\":"
            "\"linux\"}\n");
  EXPECT_EQ(started_event("c1"), "{\"type\":\"started\",\"id\":\"c1\"}\n");
  EXPECT_EQ(
      output_event("c1", false, "h\xc3\xa9\n"),
      "{\"type\":\"output\",\"id\":\"c1\",\"stream\":\"stdout\",\"data\":\"h\xc3\xa9\\n\"}\n");
  EXPECT_EQ(output_event("c1", true, std::string("\0\xff", 2)),
            "{\"type\":\"output\",\"id\":\"c1\",\"stream\":\"stderr\",\"data\":\"AP8=\","
            "\"encoding\":\"base64\"}\n");
  EXPECT_EQ(exit_event("c1", {0, std::nullopt, "", ""}),
            "{\"type\":\"exit\",\"id\":\"c1\",\"exit_code\":0}\n");
  EXPECT_EQ(exit_event("c1", {std::nullopt, 9, "", ""}),
            "{\"type\":\"exit\",\"id\":\"c1\",\"signal\":9}\n");
  EXPECT_EQ(
      exit_event("c1",
                 {std::nullopt, std::nullopt, "timeout", "command timed out after 1 seconds"}),
      "{\"type\":\"exit\",\"id\":\"c1\",\"error\":\"timeout\",\"message\":\"command timed out "
      "after 1 seconds\"}\n");
  EXPECT_EQ(error_event("bad", std::string("c1")),
            "{\"type\":\"error\",\"message\":\"bad\",\"id\":\"c1\"}\n");
  EXPECT_EQ(
      denied_event("c1", "network", "a.example:443", "no", "reviewer"),
      "{\"type\":\"denied\",\"id\":\"c1\",\"surface\":\"network\",\"target\":\"a.example:443\","
      "\"reason\":\"no\",\"source\":\"reviewer\"}\n");
  EXPECT_EQ(
      denied_event("c1", "network", "a.example:443", "no", "reviewer", "break-glass"),
      "{\"type\":\"denied\",\"id\":\"c1\",\"surface\":\"network\",\"target\":\"a.example:443\","
      "\"reason\":\"no\",\"source\":\"reviewer\",\"recovery\":\"break-glass\"}\n");
  EXPECT_EQ(approval_settled_event("c1", "r-1", Choice::AllowSession, "human",
                                   "Allowed by the user for this session."),
            "{\"type\":\"approval_settled\",\"id\":\"c1\",\"request_id\":\"r-1\",\"choice\":"
            "\"allow-session\",\"source\":\"human\",\"reason\":\"Allowed by the user for this "
            "session.\"}\n");
  EXPECT_EQ(approval_settled_event("c1", "r-2", Choice::Deny, "unavailable", ""),
            "{\"type\":\"approval_settled\",\"id\":\"c1\",\"request_id\":\"r-2\",\"choice\":"
            "\"deny\",\"source\":\"unavailable\"}\n");
}

TEST(Utf8, ValidityAndIncompleteTails) {
  EXPECT_TRUE(is_utf8("plain"));
  EXPECT_TRUE(is_utf8("\xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_utf8("\xc0\xaf"));          // overlong
  EXPECT_FALSE(is_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_utf8("\xe2\x82"));          // truncated
  EXPECT_EQ(incomplete_utf8_tail("ab"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe2"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("a\xe2\x82\xac"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("\xf0\x9f\x98"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("\xff"), 0u);
}

TEST(Base64, RoundTripsAndRejectsGarbage) {
  for (std::string bytes : {std::string(), std::string("a"), std::string("ab"), std::string("abc"),
                            std::string("\0\x01\xfe\xff", 4)})
    EXPECT_EQ(base64_decode(base64_encode(bytes)), bytes);
  EXPECT_EQ(base64_encode("abcd"), "YWJjZA==");
  EXPECT_FALSE(base64_decode("YWJjZA="));
  EXPECT_FALSE(base64_decode("YW=jZA=="));
  EXPECT_FALSE(base64_decode("YWJj\nZA=="));
}

TEST(Lines, SplitOnLfOnlyAndDropOneCr) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  EXPECT_TRUE(splitter.feed("a\r\nb", lines));
  EXPECT_TRUE(splitter.feed("\rc\n\n", lines));
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "b\rc", ""}));
  EXPECT_TRUE(splitter.feed("tail", lines));
  EXPECT_EQ(splitter.take_rest(), "tail");
}

TEST(Lines, AnOverlongLineIsDroppedAndTheNextOneKept) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  const std::string chunk(1024 * 1024, 'x');
  bool ok = true;
  for (int i = 0; i < 17; ++i) ok = splitter.feed(chunk, lines) && ok;
  EXPECT_FALSE(ok);
  EXPECT_TRUE(splitter.feed("still long\nnext\n", lines));
  EXPECT_EQ(lines, (std::vector<std::string>{"next"}));
}

}  // namespace
}  // namespace pisandbox::rpc
