// Integration tests of `pi-sandbox approvals check|tail` (docs/compatibility.md, "Approvals"): real
// reviewer programs (allow, deny, defer, crash, timeout, garbage), the terminal prompt driven
// through a real pseudo-terminal, and audit lines from concurrent runs.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "approval_network.hpp"
#include "harness.hpp"

extern char** environ;

namespace pisandbox::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const char* const kRequest =
    R"({"id":"sandbox-runtime-network-1","source":"sandbox-runtime","surface":"network",)"
    R"("operation":"connect","cwd":"/tmp","command":"curl https://example.com",)"
    R"("destination":"example.com:443"})";

std::string verdict(const std::string& outcome, const std::string& risk,
                    const std::string& rationale) {
  return R"({"outcome":")" + outcome + R"(","risk_level":")" + risk + R"(","rationale":")" +
         rationale + R"("})";
}

// The reviewer programs, written into the scratch directory at test time (executable).
const std::map<std::string, std::string>& reviewer_scripts() {
  static const std::map<std::string, std::string> scripts = {
      {"allow",
       "cat >/dev/null\nprintf '%s\\n' '" + verdict("allow", "low", "Known host.") + "'\n"},
      {"deny",
       "cat >/dev/null\nprintf '%s\\n' '" + verdict("deny", "high", "Unknown host.") + "'\n"},
      {"defer",
       "cat >/dev/null\nprintf '%s\\n' '" + verdict("defer", "medium", "Needs the user.") + "'\n"},
      {"crash", "cat >/dev/null\necho 'reviewer crashed' >&2\nexit 3\n"},
      {"timeout", "cat >/dev/null\nsleep 37.25\necho '{}'\n"},
      {"garbage", "cat >/dev/null\necho 'this is not json'\n"},
      {"sleeps", "cat >/dev/null\nsleep 619 &\nsleep 618\n"},
      {"record", "cat >\"$(dirname \"$0\")/stdin.json\"\nprintf '%s\\n' '" +
                     verdict("allow", "low", "Recorded.") + "'\n"},
  };
  return scripts;
}

class Approvals : public ::testing::Test {
 protected:
  void SetUp() override {
    reviewers_ = scratch_.root / "reviewers";
    fs::create_directories(reviewers_);
    for (const auto& [name, body] : reviewer_scripts()) {
      write_file(reviewers_ / name, "#!/bin/sh\n" + body);
      ::chmod((reviewers_ / name).c_str(), 0755);
    }
    request_ = scratch_.root / "request.json";
    write_file(request_, kRequest);
  }

  fs::path reviewer(const std::string& name) const { return reviewers_ / name; }
  fs::path audit_path() const {
    return scratch_.home / ".pi" / "agent" / "logs" / "pi-sandbox-audit.jsonl";
  }

  RunResult check(const std::vector<std::string>& extra) const {
    std::vector<std::string> argv = {sandbox_binary(), "approvals", "check", request_.string(),
                                     "--no-prompt"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv, scratch_.env());
  }

  RunResult check_with(const std::string& name) const {
    return check({"--reviewer", reviewer(name).string()});
  }

  std::vector<json> audit_entries() const {
    std::vector<json> out;
    std::istringstream lines(read_file(audit_path()));
    for (std::string line; std::getline(lines, line);) {
      out.push_back(json::parse(line, nullptr, false));
      EXPECT_FALSE(out.back().is_discarded()) << line;
    }
    return out;
  }

  Scratch scratch_;
  fs::path reviewers_, request_;
};

TEST_F(Approvals, ReviewerAllowIsGrantedAndAudited) {
  const auto r = check_with("allow");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"action":"allow","source":"reviewer","reason":"Known host."})"
                   "\n");
  const auto entries = audit_entries();
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0]["event"], "review_decision");
  EXPECT_EQ(entries[1]["event"], "grant_issued");
  EXPECT_EQ(entries[2]["event"], "grant_consumed");
  for (const auto& e : entries) {
    EXPECT_EQ(e["surface"], "network");
    EXPECT_EQ(e["destination"], "example.com:443");
    EXPECT_EQ(e["request_hash"].get<std::string>().size(), 64u);
  }
  struct stat st {};
  ASSERT_EQ(::stat(audit_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(::stat(audit_path().parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST_F(Approvals, ReviewerGetsTheRequestOnStdin) {
  const auto r = check_with("record");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto sent = json::parse(read_file(reviewers_ / "stdin.json"));
  EXPECT_EQ(sent, json::parse(kRequest));
}

TEST_F(Approvals, ReviewerDenyIsFinal) {
  const auto r = check_with("deny");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, R"({"action":"deny","source":"reviewer","reason":"Unknown host."})"
                   "\n");
  const auto entries = audit_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["event"], "review_decision");
  EXPECT_EQ(entries[0]["action"], "deny");
}

TEST_F(Approvals, DeferWithoutPromptIsUnavailable) {
  const auto r = check_with("defer");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, R"({"action":"deny","source":"unavailable","reason":"Approval needs a human, )"
                   R"(and none could be asked (no terminal, prompting off, or cancelled)."})"
                   "\n");
}

TEST_F(Approvals, CrashingReviewerIsUnavailable) {
  const auto r = check_with("crash");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, R"({"action":"deny","source":"reviewer","reason":"Automatic review is )"
                   R"(unavailable."})"
                   "\n");
  // Tried three times (two retries); what failed is in the audit log, for the user.
  const auto entries = audit_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["reason"], "Automatic review is unavailable: reviewer exited with status 3");
}

TEST_F(Approvals, GarbageOutputIsUnavailable) {
  const auto r = check_with("garbage");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, R"({"action":"deny","source":"reviewer","reason":"Automatic review is )"
                   R"(unavailable."})"
                   "\n");
  const auto entries = audit_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["reason"].get<std::string>().rfind(
                "Automatic review is unavailable: reviewer output is not valid JSON", 0),
            0u)
      << entries[0];
}

TEST_F(Approvals, SlowReviewerTimesOutAndIsKilled) {
  const auto config = scratch_.root / "config.json";
  write_file(config, R"({"approval": {"reviewerTimeoutSeconds": 1, "reviewerRetries": 0}})");
  const auto start = std::chrono::steady_clock::now();
  const auto r = check({"--config", config.string(), "--reviewer", reviewer("timeout").string()});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, R"({"action":"deny","source":"reviewer","reason":"Automatic review is )"
                   R"(unavailable."})"
                   "\n");
  EXPECT_EQ(audit_entries().at(0)["reason"],
            "Automatic review is unavailable: reviewer did not answer within 1 second");
  EXPECT_LT(took, 30s);  // generous: the reviewer would sleep 37 s
  EXPECT_TRUE(wait_until_gone("sleep 37.25"));
}

TEST_F(Approvals, AFailingReviewerWithFailureModeDeferAsksAndWithoutAHumanIsUnavailable) {
  const auto config = scratch_.root / "config.json";
  write_file(config, R"({"approval": {"reviewerFailureMode": "defer"}})");
  const auto r = check({"--config", config.string(), "--reviewer", reviewer("crash").string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, R"({"action":"deny","source":"unavailable","reason":"Approval needs a human, )"
                   R"(and none could be asked (no terminal, prompting off, or cancelled)."})"
                   "\n");
}

TEST_F(Approvals, ReviewerFromTheTrustedConfiguration) {
  const auto config = scratch_.root / "config.json";
  write_file(config, R"({"approval": {"reviewer": [")" + reviewer("allow").string() + R"("]}})");
  const auto r = check({"--config", config.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"action":"allow","source":"reviewer","reason":"Known host."})"
                   "\n");
}

TEST_F(Approvals, HardDenyNeverRunsTheReviewer) {
  write_file(request_, R"({"id":"r","source":"sandbox-runtime","surface":"network",)"
                       R"("operation":"connect","cwd":"/tmp","command":"curl -k https://x",)"
                       R"("destination":"x:443"})");
  const auto r = check_with("record");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(json::parse(r.out)["source"], "hard-deny");
  EXPECT_FALSE(fs::exists(reviewers_ / "stdin.json"));
  const auto entries = audit_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["event"], "hard_deny");
}

TEST_F(Approvals, InvalidRequestIsAUsageError) {
  write_file(request_, R"({"id":"r","source":"sandbox-runtime"})");
  const auto r = check_with("allow");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("boundary request surface must be"), std::string::npos) << r.err;
}

TEST_F(Approvals, ConcurrentRunsWriteWholeAuditLines) {
  constexpr int kRuns = 8;
  std::vector<pid_t> pids;
  for (int i = 0; i < kRuns; ++i) {
    const auto file = scratch_.root / ("request-" + std::to_string(i) + ".json");
    auto request = json::parse(kRequest);
    request["destination"] = "host-" + std::to_string(i) + ".example:443";
    write_file(file, request.dump());
    pids.push_back(spawn_process({sandbox_binary(), "approvals", "check", file.string(),
                                  "--no-prompt", "--reviewer", reviewer("allow").string()},
                                 scratch_.env()));
  }
  for (pid_t pid : pids) EXPECT_EQ(wait_process(pid), 0);
  const auto entries = audit_entries();
  ASSERT_EQ(entries.size(), 3u * kRuns);
  std::map<std::string, std::vector<std::string>> events;
  for (const auto& e : entries) events[e["destination"]].push_back(e["event"]);
  ASSERT_EQ(events.size(), static_cast<std::size_t>(kRuns));
  for (const auto& [destination, list] : events)
    EXPECT_EQ(list, (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed"}))
        << destination;
}

// ---- The terminal prompt on a real pseudo-terminal -----------------------------------

// Runs `approvals check` on a new pseudo-terminal (its controlling terminal), waits for the
// question and types `answer`.
PtyRun run_on_pty(const std::vector<std::string>& args,
                  const std::map<std::string, std::string>& env, const std::string& answer) {
  std::vector<std::string> argv = {sandbox_binary(), "approvals", "check"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_on_terminal(argv, env, {{"Choice [1-2, Enter = Deny]: ", answer}});
}

TEST_F(Approvals, TerminalPromptAllowOnce) {
  const auto run = run_on_pty({request_.string(), "--reviewer", reviewer("defer").string()},
                              scratch_.env(), "2\n");
  EXPECT_EQ(run.exit_code, 0) << run.screen;
  EXPECT_NE(run.screen.find("Sandbox approval required: connect example.com:443\r\n"
                            "Command: curl https://example.com\r\n"
                            "Needs the user.\r\n"
                            "  1) Deny\r\n"
                            "  2) Allow this exact operation once\r\n"
                            "Choice [1-2, Enter = Deny]: 2\r\n"),
            std::string::npos)
      << run.screen;
  EXPECT_NE(run.screen.find(
                R"({"action":"allow","source":"human","reason":"Allowed once by the user."})"),
            std::string::npos)
      << run.screen;
}

TEST_F(Approvals, TerminalPromptDeny) {
  const auto run = run_on_pty({request_.string()}, scratch_.env(), "1\n");
  EXPECT_EQ(run.exit_code, 1) << run.screen;
  EXPECT_NE(run.screen.find(R"({"action":"deny","source":"human","reason":"Denied by the user."})"),
            std::string::npos)
      << run.screen;
}

TEST_F(Approvals, TerminalPromptEnterDenies) {
  const auto run = run_on_pty({request_.string()}, scratch_.env(), "\n");
  EXPECT_EQ(run.exit_code, 1) << run.screen;
  EXPECT_NE(run.screen.find(R"({"action":"deny","source":"human","reason":"Denied by the user."})"),
            std::string::npos)
      << run.screen;
}

TEST_F(Approvals, TerminalPromptEscDenies) {
  const auto run = run_on_pty({request_.string()}, scratch_.env(), "\x1b");
  EXPECT_EQ(run.exit_code, 1) << run.screen;
  EXPECT_NE(run.screen.find(R"({"action":"deny","source":"human","reason":"Denied by the user."})"),
            std::string::npos)
      << run.screen;
}

TEST_F(Approvals, TerminalPromptCtrlCCancels) {
  const auto run = run_on_pty({request_.string()}, scratch_.env(), "\x03");
  EXPECT_EQ(run.exit_code, 1) << run.screen;
  EXPECT_NE(run.screen.find(R"({"action":"deny","source":"unavailable")"), std::string::npos)
      << run.screen;
}

TEST_F(Approvals, NoReviewerOutlivesTheCommandThatAsked) {
  // The proxy asks the reviewer about the destination (a name that resolves to a public
  // address, in a private network); curl gives up after 1 s, the command ends, and pi-sandbox
  // kills the reviewer's whole process group on its way out.
  const ApprovalNetwork network;
  PI_SANDBOX_REQUIRE(network.ready(),
                     "could not build the test network (user+network namespaces, veth)");
  const RunResult r =
      run_process(network.inside({sandbox_binary(), "run", "--cwd", scratch_.ws.string(),
                                  "--reviewer", reviewer("sleeps").string(), "-c",
                                  "curl -s --max-time 1 http://asked.test/"}),
                  ApprovalNetwork::without_proxies(scratch_.env()));
  EXPECT_EQ(r.exit_code, 28) << r.err;
  EXPECT_TRUE(wait_until_gone("sleep 618"));
  EXPECT_TRUE(wait_until_gone("sleep 619"));
}

TEST_F(Approvals, HostIpcQuestionShowsTheCommandAndWarning) {
  write_file(request_, R"({"id":"r","source":"sandbox-runtime","surface":"host-ipc",)"
                       R"("operation":"execute-host","cwd":"/tmp","command":"tmux ls"})");
  const auto run = run_on_pty({request_.string()}, scratch_.env(), "1\n");
  EXPECT_EQ(run.exit_code, 1) << run.screen;
  EXPECT_NE(run.screen.find("Sandbox approval required: execute-host tmux ls\r\n"
                            "Warning: this command will run on the host outside the OS sandbox.\r\n"
                            "  1) Deny\r\n"
                            "  2) Allow this exact operation once\r\n"),
            std::string::npos)
      << run.screen;
}

}  // namespace
}  // namespace pisandbox::testing
