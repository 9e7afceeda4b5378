// Integration tests of the approvals front end (docs/approvals.md): `--reviewer PROGRAM`
// refused like a relative `approval.reviewer`, the reviewer example of docs/approvals.md run
// for real, and `pi-sandbox approvals tail` over audit files written by real decisions (and by
// hand for the odd cases): one line per decision, --json, the filters, -n and --follow.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "approvals_cli_example.hpp"
#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string request_json(const std::string& surface, const std::string& command,
                         const std::string& destination) {
  json request = {{"id", "sandbox-runtime-" + surface + "-1"},
                  {"source", "sandbox-runtime"},
                  {"surface", surface},
                  {"operation", surface == "network" ? "connect" : "execute-host"},
                  {"cwd", "/tmp"},
                  {"command", command}};
  if (!destination.empty()) request["destination"] = destination;
  return request.dump();
}

std::string verdict(const std::string& outcome, const std::string& risk,
                    const std::string& rationale) {
  return json{{"outcome", outcome}, {"risk_level", risk}, {"rationale", rationale}}.dump();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class ApprovalsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::vector<std::pair<std::string, std::string>> verdicts = {
        {"allow", verdict("allow", "low", "Known host.")},
        {"deny", verdict("deny", "high", "Unknown host.")},
        {"defer", verdict("defer", "medium", "Needs the user.")}};
    for (const auto& [name, body] : verdicts)
      write_executable(name, "#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '" + body + "'\n");
  }

  fs::path write_executable(const std::string& name, const std::string& text) const {
    const fs::path path = scratch_.root / name;
    write_file(path, text);
    ::chmod(path.c_str(), 0755);
    return path;
  }
  fs::path reviewer(const std::string& name) const { return scratch_.root / name; }
  fs::path audit_path() const {
    return scratch_.home / ".pi" / "agent" / "logs" / "pi-sandbox-audit.jsonl";
  }

  // `pi-sandbox approvals check` of one request with `--no-prompt` and `extra`.
  RunResult check(const std::string& request, const std::vector<std::string>& extra) const {
    const fs::path file = scratch_.root / "request.json";
    write_file(file, request);
    std::vector<std::string> argv = {sandbox_binary(), "approvals", "check", file.string(),
                                     "--no-prompt"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv, scratch_.env());
  }
  RunResult check_with(const std::string& request, const std::string& name) const {
    return check(request, {"--reviewer", reviewer(name).string()});
  }

  RunResult tail(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> argv = {sandbox_binary(), "approvals", "tail"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run_process(argv, scratch_.env());
  }

  // The `time` of every audit line whose event decides (review_decision, hard_deny).
  std::vector<std::string> decision_times() const {
    std::vector<std::string> out;
    for (const auto& line : lines_of(read_file(audit_path()))) {
      const json entry = json::parse(line);
      if (entry["event"] == "review_decision" || entry["event"] == "hard_deny")
        out.push_back(entry["time"]);
    }
    return out;
  }

  void append_audit(const std::string& text) const {
    fs::create_directories(audit_path().parent_path());
    std::ofstream out(audit_path(), std::ios::app);
    out << text;
  }

  Scratch scratch_;
};

// --- Item 9: --reviewer ------------------------------------------------------------------

const char* const kRelativeRefusal =
    "pi-sandbox: --reviewer must be an absolute path, got \"reviewer.sh\"\n"
    "hint: the reviewer runs without a shell or a PATH search; give its full path, e.g. "
    "--reviewer \"$PWD/reviewer.sh\"\n";

TEST_F(ApprovalsCli, RunRefusesARelativeReviewer) {
  write_file(scratch_.ws / "marker", "");
  const RunResult r = scratch_.run("rm marker", {"--reviewer", "reviewer.sh"});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, kRelativeRefusal);
  EXPECT_TRUE(fs::exists(scratch_.ws / "marker"));  // nothing ran
}

TEST_F(ApprovalsCli, ServeAndCheckRefuseARelativeReviewer) {
  const RunResult served =
      run_process({sandbox_binary(), "serve", "--reviewer", "reviewer.sh"}, scratch_.env());
  EXPECT_EQ(served.exit_code, 2);
  EXPECT_EQ(served.out, "");
  EXPECT_EQ(served.err, kRelativeRefusal);
  const RunResult checked = check(request_json("network", "curl https://a.test", "a.test:443"),
                                  {"--reviewer", "reviewer.sh"});
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_EQ(checked.out, "");
  EXPECT_EQ(checked.err, kRelativeRefusal);
  EXPECT_FALSE(fs::exists(audit_path()));
  // A bare name would be a PATH search: refused too, as is an empty value.
  const RunResult bare = scratch_.run("true", {"--reviewer", "sh"});
  EXPECT_EQ(bare.exit_code, 125);
  EXPECT_TRUE(bare.err.starts_with("pi-sandbox: --reviewer must be an absolute path, got \"sh\"\n"))
      << bare.err;
  const RunResult empty = scratch_.run("true", {"--reviewer", ""});
  EXPECT_EQ(empty.exit_code, 125);
  EXPECT_TRUE(empty.err.starts_with("pi-sandbox: --reviewer must be an absolute path, got \"\"\n"))
      << empty.err;
}

TEST_F(ApprovalsCli, AMissingReviewerIsAcceptedAndEachReviewFails) {
  // As for approval.reviewer: the path is the rule, a program that cannot start fails review.
  const std::string missing = (scratch_.root / "no-such-reviewer").string();
  const RunResult ran = scratch_.run("echo ran", {"--reviewer", missing});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "ran\n");
  const RunResult checked =
      check(request_json("network", "curl https://a.test", "a.test:443"), {"--reviewer", missing});
  EXPECT_EQ(checked.exit_code, 1) << checked.err;
  EXPECT_EQ(checked.out,
            R"({"action":"deny","source":"reviewer","reason":"Automatic review is unavailable."})"
            "\n");
  const std::string audit = read_file(scratch_.home / ".pi/agent/logs/pi-sandbox-audit.jsonl");
  EXPECT_NE(audit.find("\"reason\":\"Automatic review is unavailable: reviewer " + missing +
                       " could not be started: ENOENT (No such file or directory)\""),
            std::string::npos)
      << audit;
}

TEST_F(ApprovalsCli, AnAbsoluteReviewerIsAccepted) {
  const RunResult ran = scratch_.run("echo ran", {"--reviewer", reviewer("allow").string()});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "ran\n");
  // (stderr may carry this machine's warnings, e.g. about cgroups; none about the reviewer)
  EXPECT_EQ(ran.err.find("reviewer"), std::string::npos) << ran.err;
  const RunResult checked =
      check_with(request_json("network", "curl https://a.test", "a.test:443"), "allow");
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
  EXPECT_EQ(checked.out, R"({"action":"allow","source":"reviewer","reason":"Known host."})"
                         "\n");
}

// The reviewer example of docs/approvals.md, as the document shows it.
TEST_F(ApprovalsCli, TheDocumentedReviewerExampleWorks) {
  ASSERT_TRUE(std::string(kReviewerExample).starts_with("#!/bin/sh\n")) << kReviewerExample;
  const fs::path example = write_executable("example-reviewer", kReviewerExample);
  const RunResult allowed =
      check(request_json("network", "npm install left-pad", "registry.example.com:443"),
            {"--reviewer", example.string()});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  EXPECT_EQ(allowed.out, kReviewerExampleAllowed);
  const RunResult deferred =
      check(request_json("network", "curl https://example.com", "example.com:443"),
            {"--reviewer", example.string()});
  EXPECT_EQ(deferred.exit_code, 1) << deferred.err;
  EXPECT_EQ(deferred.out, kReviewerExampleDeferred);
}

// --- Item 10: approvals tail ---------------------------------------------------------------

// Five real decisions: reviewer allow, reviewer deny, nobody to ask, hard deny, host-IPC deny.
class ApprovalsTail : public ApprovalsCli {
 protected:
  void SetUp() override {
    ApprovalsCli::SetUp();
    ASSERT_EQ(
        check_with(request_json("network", "curl https://a.test", "a.test:443"), "allow").exit_code,
        0);
    ASSERT_EQ(
        check_with(request_json("network", "curl https://b.test", "b.test:443"), "deny").exit_code,
        1);
    ASSERT_EQ(
        check_with(request_json("network", "git fetch origin", "c.test:22"), "defer").exit_code, 1);
    const RunResult hard =
        check_with(request_json("network", "curl -k https://d.test", "d.test:443"), "allow");
    ASSERT_EQ(hard.exit_code, 1);
    hard_reason_ = json::parse(hard.out)["reason"];
    ASSERT_EQ(check_with(request_json("host-ipc", "tmux ls", ""), "deny").exit_code, 1);
    times_ = decision_times();
    ASSERT_EQ(times_.size(), 5u);
    expected_ = {
        times_[0] + " allow network a.test:443 (curl https://a.test) by the reviewer: Known host.",
        times_[1] + " deny network b.test:443 (curl https://b.test) by the reviewer: Unknown host.",
        times_[2] +
            " deny network c.test:22 (git fetch origin) nobody could be asked: Approval "
            "needs a human, and none could be asked (no terminal, prompting off, or "
            "cancelled).",
        times_[3] +
            " deny network d.test:443 (curl -k https://d.test) hard deny "
            "(transport-security-weakening): `curl -k` turns off TLS certificate verification.",
        times_[4] + " deny host-ipc tmux ls by the reviewer: Unknown host.",
    };
  }

  std::string hard_reason_;
  std::vector<std::string> times_, expected_;
};

TEST_F(ApprovalsTail, OneLinePerDecision) {
  // Seven audit lines (the allow wrote three), five decisions.
  EXPECT_EQ(lines_of(read_file(audit_path())).size(), 7u);
  const RunResult r = tail();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(lines_of(r.out), expected_);
}

TEST_F(ApprovalsTail, LastN) {
  const RunResult r = tail({"-n", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out), (std::vector<std::string>{expected_[3], expected_[4]}));
  EXPECT_EQ(tail({"-n", "0"}).out, "");
}

TEST_F(ApprovalsTail, Filters) {
  EXPECT_EQ(lines_of(tail({"--decision", "allow"}).out), std::vector<std::string>{expected_[0]});
  EXPECT_EQ(lines_of(tail({"--surface", "host-ipc"}).out), std::vector<std::string>{expected_[4]});
  EXPECT_EQ(lines_of(tail({"--surface", "network", "--decision", "deny", "-n", "2"}).out),
            (std::vector<std::string>{expected_[2], expected_[3]}));
  EXPECT_EQ(tail({"--surface", "filesystem-write"}).out, "");
  const RunResult bad = tail({"--surface", "disk"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "");
  const RunResult bad_decision = tail({"--decision", "maybe"});
  EXPECT_EQ(bad_decision.exit_code, 2);
}

TEST_F(ApprovalsTail, JsonIsOneObjectPerDecision) {
  const RunResult r = tail({"--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 5u);
  std::vector<json> objects;
  for (const auto& line : lines) {
    objects.push_back(json::parse(line, nullptr, false));
    ASSERT_TRUE(objects.back().is_object()) << line;
  }
  EXPECT_EQ(objects[0],
            (json{{"time", times_[0]},
                  {"action", "allow"},
                  {"source", "reviewer"},
                  {"surface", "network"},
                  {"destination", "a.test:443"},
                  {"command", "curl https://a.test"},
                  {"reason", "Known host."},
                  {"request_hash", objects[0]["request_hash"]},
                  {"events", json::array({"review_decision", "grant_issued", "grant_consumed"})}}));
  EXPECT_EQ(objects[0]["request_hash"].get<std::string>().size(), 64u);
  EXPECT_EQ(objects[2]["source"], "unavailable");
  EXPECT_EQ(objects[3]["source"], "hard-deny");
  EXPECT_EQ(objects[3]["reason"], hard_reason_);
  EXPECT_EQ(objects[4]["command"], "tmux ls");
  EXPECT_FALSE(objects[4].contains("destination"));
  EXPECT_EQ(objects[4]["events"], json::array({"review_decision"}));
  EXPECT_EQ(tail({"--json", "--decision", "allow"}).out, lines[0] + "\n");
}

TEST(ApprovalsTailFile, AMissingLogIsSaidAndNotAnError) {
  Scratch scratch;
  const RunResult r = run_process({sandbox_binary(), "approvals", "tail"}, scratch.env());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pi-sandbox: no audit log at " +
                       (scratch.home / ".pi/agent/logs/pi-sandbox-audit.jsonl").string() + "\n");
}

TEST_F(ApprovalsCli, HandWrittenLines) {
  const std::string hash(64, 'a');
  const std::string other(64, 'b');
  const auto entry = [](json j) { return j.dump() + "\n"; };
  append_audit(
      // An allow by the user for the rest of the command, its grant, and a second request
      // that shared the decision (its grant lines add nothing).
      entry({{"time", "2024-05-01T10:00:00.000Z"},
             {"event", "review_decision"},
             {"request_hash", hash},
             {"surface", "network"},
             {"destination", "registry.npmjs.org:443"},
             {"action", "allow"},
             {"source", "human"},
             {"reason", "Allowed by the user for the rest of this command."},
             {"command", "npm install left-pad"}}) +
      entry({{"time", "2024-05-01T10:00:00.001Z"},
             {"event", "grant_issued"},
             {"request_hash", hash},
             {"surface", "network"},
             {"destination", "registry.npmjs.org:443"},
             {"source", "broker"},
             {"reason", "valid for the rest of this command"}}) +
      entry({{"time", "2024-05-01T10:00:00.002Z"},
             {"event", "grant_consumed"},
             {"request_hash", hash},
             {"surface", "network"},
             {"source", "broker"}}) +
      entry({{"time", "2024-05-01T10:00:00.003Z"},
             {"event", "grant_issued"},
             {"request_hash", hash},
             {"surface", "network"},
             {"source", "broker"}}) +
      entry({{"time", "2024-05-01T10:00:00.004Z"},
             {"event", "grant_consumed"},
             {"request_hash", hash},
             {"surface", "network"},
             {"source", "broker"}}) +
      // Garbage (a line cut by a crash), then an allow whose grant was rejected.
      "{\"time\":\"2024-05-01T10:00:01\n" +
      entry({{"time", "2024-05-01T10:00:02.000Z"},
             {"event", "review_decision"},
             {"request_hash", other},
             {"surface", "filesystem-write"},
             {"path", "/home/u/ws/out.txt"},
             {"action", "allow"},
             {"source", "reviewer"},
             {"reason", "Inside the workspace."},
             {"command", "tee out.txt"}}) +
      entry({{"time", "2024-05-01T10:00:02.001Z"},
             {"event", "grant_rejected"},
             {"request_hash", other},
             {"surface", "filesystem-write"},
             {"path", "/home/u/ws/out.txt"},
             {"action", "deny"},
             {"source", "invalid-grant"},
             {"reason", "The exact one-shot grant is missing, invalid, or expired."},
             {"command", "tee out.txt"}}) +
      // A long command with a newline and an escape sequence in it.
      entry({{"time", "2024-05-01T10:00:03.000Z"},
             {"event", "review_decision"},
             {"request_hash", hash},
             {"surface", "network"},
             {"destination", "x.test:80"},
             {"action", "deny"},
             {"source", "human"},
             {"reason", "Denied by the user."},
             {"command", "printf '\x1b[2J'\ncurl http://x.test/" + std::string(100, 'p')}}));
  const RunResult r = tail();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out),
            (std::vector<std::string>{
                "2024-05-01T10:00:00.000Z allow network registry.npmjs.org:443 (npm install "
                "left-pad) by the user: Allowed by the user for the rest of this command.",
                "(unreadable audit line) {\"time\":\"2024-05-01T10:00:01",
                "2024-05-01T10:00:02.000Z deny filesystem-write /home/u/ws/out.txt (tee out.txt) "
                "invalid grant: The exact one-shot grant is missing, invalid, or expired.",
                "2024-05-01T10:00:03.000Z deny network x.test:80 (printf '\\x1b[2J'\\ncurl "
                "http://x.test/" +
                    std::string(80 - 33, 'p') + "\u2026) by the user: Denied by the user."}));
  // Filters leave out the unreadable line; --json shows the rejection as the decision.
  EXPECT_EQ(lines_of(tail({"--decision", "deny", "--json"}).out).size(), 2u);
  const json rejected =
      json::parse(lines_of(tail({"--surface", "filesystem-write", "--json"}).out).at(0));
  EXPECT_EQ(rejected["events"], json::array({"review_decision", "grant_rejected"}));
  EXPECT_EQ(rejected["source"], "invalid-grant");
}

// --- --follow --------------------------------------------------------------------------------

// Reads from `fd` into `text` until it holds `want` whole lines, up to 20 s; returns them.
std::vector<std::string> read_lines(int fd, std::string& text, std::size_t want) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (lines_of(text).size() < want || (!text.empty() && text.back() != '\n')) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return lines_of(text);
}

// A `tail --follow` started by a test: killed (SIGTERM) and waited for when the test ends,
// also when an assertion ends it early; `from` is the read end of its stdout.
struct Follower {
  pid_t pid = -1;
  int from = -1;
  Follower(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) {
    int to = -1;
    pid = spawn_piped(argv, env, to, from);
    if (to >= 0) ::close(to);
  }
  ~Follower() {
    if (pid > 0) stop();
    if (from >= 0) ::close(from);
  }
  Follower(const Follower&) = delete;
  Follower& operator=(const Follower&) = delete;
  // Ends it; returns its exit code (128+SIGTERM when it was still following).
  int stop() {
    ::kill(pid, SIGTERM);
    const int code = wait_process(pid);
    pid = -1;
    return code;
  }
};

TEST_F(ApprovalsCli, FollowWaitsForTheFileAndShowsAppendedDecisions) {
  ASSERT_FALSE(fs::exists(audit_path()));
  const fs::path errors = scratch_.root / "follow.err";
  Follower follower({"/bin/sh", "-c", "exec \"$0\" approvals tail --follow --json 2>\"$1\"",
                     sandbox_binary(), errors.string()},
                    scratch_.env());
  ASSERT_GT(follower.pid, 0);
  // Until the file exists it says so once.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (read_file(errors).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(read_file(errors),
            "pi-sandbox: no audit log at " + audit_path().string() + " yet, waiting for it\n");

  // A real decision creates the file: shown once its lines are there.
  ASSERT_EQ(
      check_with(request_json("network", "curl https://a.test", "a.test:443"), "allow").exit_code,
      0);
  std::string text;
  auto lines = read_lines(follower.from, text, 1);
  ASSERT_EQ(lines.size(), 1u) << text;
  const json first = json::parse(lines[0]);
  EXPECT_EQ(first["destination"], "a.test:443");
  EXPECT_EQ(first["events"], json::array({"review_decision", "grant_issued", "grant_consumed"}));

  // A line appended by hand after that.
  append_audit(json{{"time", "2024-05-01T10:00:03.000Z"},
                    {"event", "hard_deny"},
                    {"request_hash", std::string(64, 'c')},
                    {"surface", "host-ipc"},
                    {"command", "rm -rf ~"},
                    {"action", "deny"},
                    {"source", "hard-deny"},
                    {"reason", "Deletes the home."}}
                   .dump() +
               "\n");
  lines = read_lines(follower.from, text, 2);
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_EQ(json::parse(lines[1]), (json{{"time", "2024-05-01T10:00:03.000Z"},
                                         {"action", "deny"},
                                         {"source", "hard-deny"},
                                         {"surface", "host-ipc"},
                                         {"command", "rm -rf ~"},
                                         {"reason", "Deletes the home."},
                                         {"request_hash", std::string(64, 'c')},
                                         {"events", json::array({"hard_deny"})}}));

  // A half-written line waits for its end.
  append_audit(R"({"time":"2024-05-01T10:00:04.000Z","event":"review_decision",)");
  std::this_thread::sleep_for(500ms);
  append_audit(R"("request_hash":"d","surface":"network","destination":"e.test:443",)"
               R"("action":"deny","source":"human","reason":"Denied by the user."})"
               "\n");
  lines = read_lines(follower.from, text, 3);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(json::parse(lines[2])["destination"], "e.test:443");

  EXPECT_EQ(follower.stop(), 128 + SIGTERM);
  EXPECT_EQ(lines_of(read_file(errors)).size(), 1u);
}

TEST_F(ApprovalsCli, FollowStartsWithTheLastNAndRereadsATruncatedFile) {
  ASSERT_EQ(
      check_with(request_json("network", "curl https://a.test", "a.test:443"), "deny").exit_code,
      1);
  ASSERT_EQ(
      check_with(request_json("network", "curl https://b.test", "b.test:443"), "deny").exit_code,
      1);
  Follower follower({sandbox_binary(), "approvals", "tail", "-f", "-n", "1"}, scratch_.env());
  ASSERT_GT(follower.pid, 0);
  std::string text;
  auto lines = read_lines(follower.from, text, 1);
  ASSERT_EQ(lines.size(), 1u) << text;
  EXPECT_NE(lines[0].find(" deny network b.test:443 (curl https://b.test) by the reviewer"),
            std::string::npos)
      << lines[0];
  // The log is emptied (truncated) and written again, shorter than before: read from its start.
  { std::ofstream truncate(audit_path(), std::ios::trunc); }
  ASSERT_EQ(
      check_with(request_json("network", "curl https://c.test", "c.test:443"), "deny").exit_code,
      1);
  lines = read_lines(follower.from, text, 2);
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_NE(lines[1].find(" deny network c.test:443 (curl https://c.test) by the reviewer"),
            std::string::npos)
      << lines[1];
  EXPECT_EQ(follower.stop(), 128 + SIGTERM);
}

}  // namespace
}  // namespace pisandbox::testing
