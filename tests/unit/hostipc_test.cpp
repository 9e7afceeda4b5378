// The host-IPC fallback (docs/host-ipc.md, "Two ways in"; compatibility C59–C67), branch by branch.
#include <gtest/gtest.h>

#include "hostipc/host_ipc.hpp"

namespace pisandbox::hostipc {
namespace {

using namespace std::chrono_literals;
using approval::Action;
using approval::ApprovalResult;
using approval::BoundaryRequest;
using approval::Source;
using sandbox::Outcome;
using sandbox::RunFailure;
using sandbox::RunFailureKind;
using sandbox::Stream;

class ManualClock final : public approval::Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return now_; }
  void advance(std::chrono::milliseconds by) { now_ += by; }

 private:
  std::chrono::steady_clock::time_point now_{};
};

/// Everything written, in order, as `[out]text` / `[err]text` pieces.
class Transcript final : public sandbox::OutputSink {
 public:
  void write(Stream stream, std::string_view bytes) override {
    text += (stream == Stream::Stdout ? "[out]" : "[err]") + std::string(bytes);
  }
  std::string text;
};

/// One scripted run: what it writes, how long it takes, how it ends.
struct Script {
  std::string out, err;
  std::chrono::milliseconds takes{0};
  Outcome outcome = sandbox::Exited{0};
};

struct Calls {
  int sandboxed = 0, host = 0, approvals = 0;
  std::optional<std::chrono::milliseconds> host_timeout;
  std::optional<std::chrono::milliseconds> sandbox_timeout;
  std::vector<BoundaryRequest> requests;
  std::vector<std::string> warnings;
};

class HostIpcTest : public ::testing::Test {
 protected:
  Outcome run_with(const config::HostIpcConfig& config, const std::string& command) {
    invocation.command = command;
    auto play = [this](const Script& script, sandbox::OutputSink& output) {
      if (!script.out.empty()) output.write(Stream::Stdout, script.out);
      if (!script.err.empty()) output.write(Stream::Stderr, script.err);
      clock.advance(script.takes);
      return script.outcome;
    };
    Collaborators with{
        .sandboxed =
            [&, play](std::optional<std::chrono::milliseconds> t, sandbox::OutputSink& o) {
              ++calls.sandboxed;
              calls.sandbox_timeout = t;
              return play(sandboxed, o);
            },
        .host =
            [&, play](std::optional<std::chrono::milliseconds> t, sandbox::OutputSink& o) {
              ++calls.host;
              calls.host_timeout = t;
              return play(host, o);
            },
        .approve =
            [&](const BoundaryRequest& request, std::string_view warning) {
              ++calls.approvals;
              calls.requests.push_back(request);
              calls.warnings.emplace_back(warning);
              clock.advance(approval_takes);
              return answer;
            },
        .clock = clock,
        .new_id =
            [](std::string_view kind) { return "sandbox-runtime-" + std::string(kind) + "-1"; },
        .host_socket_refused = [this] { return host_socket_refused; },
    };
    return hostipc::run(config, invocation, with, transcript);
  }

  static config::HostIpcConfig ask(std::vector<std::string> prefixes, bool retry) {
    config::HostIpcConfig c;
    c.mode = config::HostIpcMode::Ask;
    c.preflight_command_prefixes = std::move(prefixes);
    c.retry_on_unix_socket_error = retry;
    return c;
  }

  ManualClock clock;
  Transcript transcript;
  Calls calls;
  Invocation invocation{"", "/home/u/ws", std::nullopt, false, std::nullopt};
  Script sandboxed, host;
  ApprovalResult answer{Action::Allow, Source::Reviewer, "ok"};
  std::chrono::milliseconds approval_takes{0};
  bool host_socket_refused = false;
};

const std::string kSocketRefused = "error connecting to /tmp/s (Operation not permitted)\n";

int exit_code(const Outcome& outcome) {
  return std::get<sandbox::Exited>(*outcome).code;
}

TEST(PreflightPrefix, MatchesOnlyAWholeLeadingWordAndTheFirstConfiguredWins) {
  const std::vector<std::string> prefixes = {"tmux", "git push", "tmux ls"};
  struct Row {
    std::string command;
    std::optional<std::string> expected;
  };
  for (const Row& row : std::vector<Row>{
           {"tmux", "tmux"},
           {"  tmux ls", "tmux"},
           {"tmux\tls", "tmux"},
           {"tmux\n", "tmux"},
           {"tmuxinator", std::nullopt},
           {"env tmux ls", std::nullopt},
           {"TMUX ls", std::nullopt},
           {"git push origin", "git push"},
           {"git pushx", std::nullopt},
           {"git  push", std::nullopt},
           {"", std::nullopt},
           {"   ", std::nullopt},
       })
    EXPECT_EQ(matching_preflight_prefix(row.command, prefixes), row.expected) << row.command;
  EXPECT_EQ(matching_preflight_prefix("tmux ls", {"tmux ls", "tmux"}), "tmux ls");
  EXPECT_EQ(matching_preflight_prefix("tmux ls", {}), std::nullopt);
}

TEST(UnixSocketRefusal, NeedsOperationNotPermittedAndASocketWordInAnyCase) {
  EXPECT_TRUE(is_unix_socket_refusal(kSocketRefused));
  EXPECT_TRUE(is_unix_socket_refusal("socket: OPERATION NOT PERMITTED"));
  EXPECT_TRUE(is_unix_socket_refusal("Operation not permitted while Connecting"));
  EXPECT_TRUE(is_unix_socket_refusal("ipc: operation not permitted"));
  EXPECT_TRUE(is_unix_socket_refusal("Socket\nsomething\noperation not permitted"));
  EXPECT_FALSE(is_unix_socket_refusal("socket: permission denied"));
  EXPECT_FALSE(is_unix_socket_refusal("operation not permitted"));
  EXPECT_FALSE(is_unix_socket_refusal("open /etc/x: operation not permitted"));
  EXPECT_FALSE(is_unix_socket_refusal(""));
}

TEST(Subagent, DepthAboveZeroIsASubagent) {
  EXPECT_TRUE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTH=1"}));
  EXPECT_TRUE(is_subagent({"A=b", "PI_SANDBOX_SUBAGENT_DEPTH= 2 "}));
  EXPECT_TRUE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTH=0.5"}));
  EXPECT_FALSE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTH=0"}));
  EXPECT_FALSE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTH="}));
  EXPECT_FALSE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTH=-1"}));
  EXPECT_FALSE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTH=yes"}));
  EXPECT_FALSE(is_subagent({"PI_SANDBOX_SUBAGENT_DEPTHX=1"}));
  EXPECT_FALSE(is_subagent({}));
}

TEST_F(HostIpcTest, ModeOffAlwaysRunsSandboxedEvenWithPrefixesAndARefusal) {
  config::HostIpcConfig off = ask({"tmux"}, true);
  off.mode = config::HostIpcMode::Off;
  sandboxed = {"", kSocketRefused, 0ms, sandbox::Exited{1}};
  const Outcome r = run_with(off, "tmux ls");
  EXPECT_EQ(exit_code(r), 1);
  EXPECT_EQ(calls.sandboxed, 1);
  EXPECT_EQ(calls.approvals, 0);
  EXPECT_EQ(calls.host, 0);
  EXPECT_EQ(transcript.text, "[err]" + kSocketRefused);
}

TEST_F(HostIpcTest, PreflightAllowedRunsOnTheHostOnlyWithTheExactRequest) {
  host = {"0: 1 windows\n", "", 0ms, sandbox::Exited{0}};
  invocation.agent_name = "worker";
  const Outcome r = run_with(ask({"tmux"}, false), "  tmux ls");
  EXPECT_EQ(exit_code(r), 0);
  EXPECT_EQ(calls.sandboxed, 0);
  EXPECT_EQ(calls.host, 1);
  EXPECT_EQ(transcript.text, "[out]0: 1 windows\n");
  ASSERT_EQ(calls.requests.size(), 1u);
  const BoundaryRequest& q = calls.requests[0];
  EXPECT_EQ(q.id, "sandbox-runtime-host-ipc-1");
  EXPECT_EQ(q.source, "sandbox-runtime");
  EXPECT_EQ(q.surface, approval::Surface::HostIpc);
  EXPECT_EQ(q.operation, "execute-host");
  EXPECT_EQ(q.cwd, "/home/u/ws");
  EXPECT_EQ(q.command, "  tmux ls");
  EXPECT_EQ(q.agent_name, "worker");
  EXPECT_EQ(q.tool_input_preview,
            "A configured prefix requested approval before sandbox execution.");
  ASSERT_TRUE(q.matched_policy.has_value());
  EXPECT_EQ(q.matched_policy->rule, "preflight-prefix:tmux");
  EXPECT_EQ(calls.warnings[0],
            "Warning: this command will run on the host outside the OS sandbox.");
  EXPECT_EQ(q.resolved_path, std::nullopt);
}

TEST_F(HostIpcTest, TheRequestNamesTheFileTheHostRunStarts) {
  host = {"tmux 3.3a\n", "", 0ms, sandbox::Exited{0}};
  invocation.program = "/usr/bin/tmux";
  const Outcome r = run_with(ask({"tmux"}, false), "tmux -V");
  EXPECT_EQ(exit_code(r), 0);
  ASSERT_EQ(calls.requests.size(), 1u);
  EXPECT_EQ(calls.requests[0].resolved_path, "/usr/bin/tmux");
}

TEST_F(HostIpcTest, PreflightDeniedPrintsTheReasonAndExitsOneWithoutRunningAnything) {
  answer = {Action::Deny, Source::Human, "Denied by the user."};
  const Outcome r = run_with(ask({"tmux"}, true), "tmux ls");
  EXPECT_EQ(exit_code(r), 1);
  EXPECT_EQ(calls.sandboxed + calls.host, 0);
  EXPECT_EQ(transcript.text, "[err]pi-sandbox: host-IPC execution denied: Denied by the user.\n");
}

TEST_F(HostIpcTest, PreflightDeniedWithoutAReasonHasNoColon) {
  answer = {Action::Deny, Source::Unavailable, ""};
  EXPECT_EQ(exit_code(run_with(ask({"tmux"}, false), "tmux")), 1);
  EXPECT_EQ(transcript.text, "[err]pi-sandbox: host-IPC execution denied\n");
}

TEST_F(HostIpcTest, PreflightForASubagentIsRefusedWithoutAsking) {
  invocation.subagent = true;
  EXPECT_EQ(exit_code(run_with(ask({"tmux"}, true), "tmux ls")), 1);
  EXPECT_EQ(calls.approvals + calls.sandboxed + calls.host, 0);
  EXPECT_EQ(transcript.text,
            "[err]pi-sandbox: host-IPC execution denied: builtin subagents do not support host "
            "forwarding\n");
}

TEST_F(HostIpcTest, RetryAllowedPrintsFirstAttemptThenBannerThenHostOutput) {
  sandboxed = {"partial\n", kSocketRefused, 0ms, sandbox::Exited{1}};
  host = {"sessions\n", "", 0ms, sandbox::Exited{0}};
  const Outcome r = run_with(ask({}, true), "tmux -S /tmp/s ls");
  EXPECT_EQ(exit_code(r), 0);
  EXPECT_EQ(transcript.text, "[out]partial\n[err]" + kSocketRefused +
                                 "[err]\n--- pi-sandbox: approved host-IPC retry (outside OS "
                                 "sandbox) ---\n[out]sessions\n");
  ASSERT_EQ(calls.requests.size(), 1u);
  EXPECT_EQ(calls.requests[0].matched_policy->rule, "unix-socket-eperm");
  EXPECT_EQ(calls.requests[0].tool_input_preview,
            "The sandboxed attempt failed and may already have had partial side effects.");
  EXPECT_EQ(calls.warnings[0],
            "Warning: the first sandboxed attempt may already have had partial side effects. "
            "The retry runs on the host outside the OS sandbox.");
}

TEST_F(HostIpcTest, ARefusedHostSocketTriggersTheRetryWhateverStderrSays) {
  sandboxed = {"", "error: gpg failed to sign the data\n", 0ms, sandbox::Exited{128}};
  host = {"signed\n", "", 0ms, sandbox::Exited{0}};
  host_socket_refused = true;
  EXPECT_EQ(exit_code(run_with(ask({}, true), "git commit -S -m x")), 0);
  ASSERT_EQ(calls.requests.size(), 1u);
  EXPECT_EQ(calls.requests[0].operation, "execute-host");
  EXPECT_EQ(calls.requests[0].matched_policy->rule, "unix-socket-eperm");
  EXPECT_EQ(calls.host, 1);
}

TEST_F(HostIpcTest, WithoutARefusedHostSocketGpgsErrorTriggersNothing) {
  sandboxed = {"", "error: gpg failed to sign the data\n", 0ms, sandbox::Exited{128}};
  EXPECT_EQ(exit_code(run_with(ask({}, true), "git commit -S -m x")), 128);
  EXPECT_EQ(calls.approvals, 0);
  host_socket_refused = true;
  EXPECT_EQ(exit_code(run_with(ask({}, false), "git commit -S -m x")), 128);
  EXPECT_EQ(calls.approvals, 0);  // retryOnUnixSocketError off: never
}

TEST_F(HostIpcTest, RetryDeniedReturnsTheSandboxedResultUnchanged) {
  sandboxed = {"", kSocketRefused, 0ms, sandbox::Exited{3}};
  answer = {Action::Deny, Source::Reviewer, "no"};
  const Outcome r = run_with(ask({}, true), "tmux ls");
  EXPECT_EQ(exit_code(r), 3);
  EXPECT_EQ(calls.host, 0);
  EXPECT_EQ(transcript.text, "[err]" + kSocketRefused);
}

TEST_F(HostIpcTest, HostFailureAfterRetryIsReturnedAndNeverRetriedAgain) {
  sandboxed = {"", kSocketRefused, 0ms, sandbox::Exited{1}};
  host = {"", kSocketRefused, 0ms, sandbox::Exited{2}};
  EXPECT_EQ(exit_code(run_with(ask({}, true), "tmux ls")), 2);
  EXPECT_EQ(calls.approvals, 1);
  EXPECT_EQ(calls.host, 1);
}

TEST_F(HostIpcTest, RetryIsOnlyConsideredWhenEnabled) {
  sandboxed = {"", kSocketRefused, 0ms, sandbox::Exited{1}};
  EXPECT_EQ(exit_code(run_with(ask({"git"}, false), "tmux ls")), 1);
  EXPECT_EQ(calls.approvals, 0);
}

TEST_F(HostIpcTest, StdoutLookAlikesNeverTriggerARetry) {
  sandboxed = {kSocketRefused, "", 0ms, sandbox::Exited{1}};
  EXPECT_EQ(exit_code(run_with(ask({}, true), "cat log")), 1);
  EXPECT_EQ(calls.approvals, 0);
}

TEST_F(HostIpcTest, OnlyTheLast64KiBOfStderrAreRead) {
  // The refusal scrolled out of the kept tail: no retry.
  sandboxed = {"", kSocketRefused + std::string(kMaxStderrTailBytes, 'x'), 0ms, sandbox::Exited{1}};
  EXPECT_EQ(exit_code(run_with(ask({}, true), "tmux ls")), 1);
  EXPECT_EQ(calls.approvals, 0);
}

TEST_F(HostIpcTest, SuccessSignalTimeoutAbortAndLaunchFailureAreNeverRetried) {
  const std::vector<Outcome> endings = {
      sandbox::Exited{0},
      sandbox::Signaled{9},
      std::unexpected(RunFailure{RunFailureKind::TimedOut, ""}),
      std::unexpected(RunFailure{RunFailureKind::Aborted, ""}),
      std::unexpected(RunFailure{RunFailureKind::LaunchFailed, "clone3: EPERM"}),
  };
  for (const Outcome& ending : endings) {
    calls = {};
    sandboxed = {"", kSocketRefused, 0ms, ending};
    const Outcome r = run_with(ask({}, true), "tmux ls");
    EXPECT_EQ(r, ending);
    EXPECT_EQ(calls.approvals, 0);
    EXPECT_EQ(calls.host, 0);
  }
}

TEST_F(HostIpcTest, RetryForASubagentIsRefusedAndReturnsTheSandboxedResult) {
  invocation.subagent = true;
  sandboxed = {"", kSocketRefused, 0ms, sandbox::Exited{1}};
  EXPECT_EQ(exit_code(run_with(ask({}, true), "tmux ls")), 1);
  EXPECT_EQ(calls.approvals, 0);
  EXPECT_EQ(transcript.text, "[err]" + kSocketRefused +
                                 "[err]pi-sandbox: host-IPC retry refused: builtin subagents do "
                                 "not support host forwarding\n");
}

TEST_F(HostIpcTest, TheHostRunGetsWhatIsLeftOfTheTimeout) {
  invocation.timeout = 10000ms;
  sandboxed = {"", kSocketRefused, 3000ms, sandbox::Exited{1}};
  approval_takes = 2500ms;
  EXPECT_EQ(exit_code(run_with(ask({}, true), "tmux ls")), 0);
  EXPECT_EQ(calls.sandbox_timeout, 10000ms);
  EXPECT_EQ(calls.host_timeout, 4500ms);
}

TEST_F(HostIpcTest, NothingLeftIsATimeoutWithoutAHostRun) {
  invocation.timeout = 5000ms;
  approval_takes = 5000ms;
  const Outcome r = run_with(ask({"tmux"}, false), "tmux ls");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, RunFailureKind::TimedOut);
  EXPECT_EQ(calls.host, 0);
}

TEST_F(HostIpcTest, WithoutATimeoutTheHostRunHasNone) {
  approval_takes = 100000ms;
  EXPECT_EQ(exit_code(run_with(ask({"tmux"}, false), "tmux ls")), 0);
  EXPECT_EQ(calls.host, 1);
  EXPECT_EQ(calls.host_timeout, std::nullopt);
}

}  // namespace
}  // namespace pisandbox::hostipc
