// The host-IPC fallback end to end (docs/host-ipc.md; compatibility C59–C67; docs/cases.md, C-09):
// a real tmux server and a real ssh-agent on Unix sockets the sandbox refuses, real reviewer
// programs, and the real host run.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;

const std::string kBanner = "\n--- pi-sandbox: approved host-IPC retry (outside OS sandbox) ---\n";

class HostIpc : public ::testing::Test {
 protected:
  void SetUp() override {
    PI_SANDBOX_REQUIRE(::access("/usr/bin/tmux", X_OK) == 0, "tmux is not installed");
    tmux_socket_ = scratch_.root / "tmux.sock";
    const RunResult started = run_process(
        {"/usr/bin/tmux", "-S", tmux_socket_.string(), "new-session", "-d", "-s", "pisb"});
    ASSERT_EQ(started.exit_code, 0) << started.err;
    for (const auto& [name, outcome] : {std::pair{"allow", "allow"}, std::pair{"deny", "deny"}}) {
      const fs::path script = scratch_.root / (std::string(name) + ".sh");
      write_file(script, std::string("#!/bin/sh\ncat >/dev/null\necho '{\"outcome\":\"") + outcome +
                             "\",\"risk_level\":\"low\",\"rationale\":\"reviewer said " + outcome +
                             "\"}'\n");
      ::chmod(script.c_str(), 0755);
    }
    write_retry_only_reviewer(scratch_.root / "retry-only.sh");
  }
  void TearDown() override {
    if (!tmux_socket_.empty())
      run_process({"/usr/bin/tmux", "-S", tmux_socket_.string(), "kill-server"});
  }

  /// Writes the trusted configuration (outside the workspace) and returns its path.
  std::string config(const std::string& host_ipc) const {
    const fs::path path = scratch_.root / "config.json";
    write_file(path, R"({"hostIPC": )" + host_ipc + "}");
    return path.string();
  }
  std::string reviewer(const std::string& name) const {
    return (scratch_.root / (name + ".sh")).string();
  }
  /// Starts a test ssh-agent listening on `socket`; `pid` is its process id.
  static void start_ssh_agent(const fs::path& socket, pid_t& pid) {
    const RunResult agent = run_process({"/usr/bin/ssh-agent", "-a", socket.string()});
    ASSERT_EQ(agent.exit_code, 0) << agent.err;
    const auto pid_at = agent.out.find("SSH_AGENT_PID=");
    ASSERT_NE(pid_at, std::string::npos) << agent.out;
    pid = std::atoi(agent.out.c_str() + pid_at + 14);
  }
  std::string tmux_ls() const { return "tmux -S " + tmux_socket_.string() + " list-sessions"; }

  /// The audit lines written so far, parsed.
  std::vector<json> audit() const {
    std::vector<json> lines;
    std::istringstream in(
        read_file(scratch_.home / ".pi" / "agent" / "logs" / "pi-sandbox-audit.jsonl"));
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  Scratch scratch_;
  fs::path tmux_socket_;
};

const char* const kRetry = R"({"mode": "ask", "retryOnUnixSocketError": true})";

/// How the sandboxed attempt's refused socket reads: the broker's EACCES, or seccomp's EPERM
/// on a kernel that cannot broker.
std::string refused_text() {
  return unix_sockets_brokered() ? "(Permission denied)" : "(Operation not permitted)";
}

TEST_F(HostIpc, TheSandboxRefusesTheTmuxSocket) {
  const RunResult r = scratch_.run(tmux_ls());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(refused_text()), std::string::npos) << r.err;
  if (unix_sockets_brokered()) {
    EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + tmux_socket_.string() + ": "),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(r.out, "");
}

TEST_F(HostIpc, AnApprovedTmuxSocketWorksInsideTheSandboxWithoutAHostRun) {
  PI_SANDBOX_REQUIRE(unix_sockets_brokered(), "this kernel cannot broker Unix sockets");
  const RunResult r =
      scratch_.run(tmux_ls() + "; echo \"${PI_SANDBOX:-host}\"",
                   {"--config", config(kRetry), "--reviewer", reviewer("allow"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("pisb: 1 windows")) << r.out;
  EXPECT_TRUE(r.out.ends_with("\n1\n")) << r.out;  // PI_SANDBOX=1: it ran inside
  EXPECT_EQ(r.err.find("approved host-IPC retry"), std::string::npos) << r.err;
  // Only host-socket decisions (they name the path), no host run's.
  for (const json& line : audit())
    EXPECT_EQ(line.value("path", ""), tmux_socket_.string()) << line.dump();
}

TEST_F(HostIpc, AnAllowedRetryPrintsTheSessionsAfterTheBanner) {
  const RunResult r = scratch_.run(
      tmux_ls(), {"--config", config(kRetry), "--reviewer", reviewer("retry-only"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("pisb: 1 windows")) << r.out;
  // The first attempt's error stays, then the banner.
  const auto error = r.err.find(refused_text());
  ASSERT_NE(error, std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kBanner, error), std::string::npos) << r.err;
  // The grant was issued and consumed for exactly this command and workspace.
  std::vector<std::string> events;
  for (const json& line : audit()) {
    EXPECT_EQ(line["surface"], "host-ipc");
    EXPECT_EQ(line["command"], tmux_ls());
    if (line.value("path", "") == tmux_socket_.string()) continue;  // the socket's
    // The host run's: its path is the file the command's first word runs.
    EXPECT_EQ(line.value("path", ""), "/usr/bin/tmux") << line.dump();
    events.push_back(line["event"]);
  }
  EXPECT_EQ(events,
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed"}));
}

TEST_F(HostIpc, ADeniedRetryReturnsTheOriginalErrorAndExitCode) {
  const RunResult r = scratch_.run(
      tmux_ls(), {"--config", config(kRetry), "--reviewer", reviewer("deny"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(refused_text()), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("approved host-IPC retry"), std::string::npos) << r.err;
}

TEST_F(HostIpc, WithoutAReviewerOrTerminalTheRetryIsDenied) {
  const RunResult r = scratch_.run(tmux_ls(), {"--config", config(kRetry), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.find("approved host-IPC retry"), std::string::npos) << r.err;
}

TEST_F(HostIpc, APreflightPrefixAsksFirstAndTheSandboxNeverRuns) {
  // PI_SANDBOX is set inside the sandbox only: one line "host" proves exactly one run, on
  // the host.
  const std::string command =
      tmux_ls() + "; echo \"${PI_SANDBOX:-host}\" >> " + (scratch_.ws / "runs").string();
  const RunResult r = scratch_.run(
      command, {"--config", config(R"({"mode": "ask", "preflightCommandPrefixes": ["tmux"]})"),
                "--reviewer", reviewer("allow"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("pisb: 1 windows")) << r.out;
  EXPECT_EQ(read_file(scratch_.ws / "runs"), "host\n");
  EXPECT_EQ(r.err.find("approved host-IPC retry"), std::string::npos) << r.err;
}

TEST_F(HostIpc, ADeniedPreflightPrintsTheReasonAndExitsOne) {
  const std::string command = tmux_ls() + "; echo ran >> " + (scratch_.ws / "runs").string();
  const RunResult r = scratch_.run(
      command, {"--config", config(R"({"mode": "ask", "preflightCommandPrefixes": ["tmux"]})"),
                "--reviewer", reviewer("deny"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pi-sandbox: host-IPC execution denied: reviewer said deny\n");
  EXPECT_FALSE(fs::exists(scratch_.ws / "runs"));
}

TEST_F(HostIpc, ModeOffNeverLeavesTheSandbox) {
  const RunResult r = scratch_.run(
      tmux_ls(),
      {"--config",
       config(
           R"({"mode": "off", "preflightCommandPrefixes": ["tmux"], "retryOnUnixSocketError": true})"),
       "--reviewer", reviewer("retry-only"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(refused_text()), std::string::npos) << r.err;
  // Only the socket was asked about (and refused); no host run was.
  // Only host-socket decisions (they name the path), no host run's.
  for (const json& line : audit())
    EXPECT_EQ(line.value("path", ""), tmux_socket_.string()) << line.dump();
}

TEST_F(HostIpc, SubagentsAreRefusedBothWays) {
  auto env = scratch_.env();
  env["PI_SANDBOX_SUBAGENT_DEPTH"] = "1";
  const std::string binary = sandbox_binary();
  RunResult r = run_process({binary, "run", "--cwd", scratch_.ws.string(), "--config",
                             config(R"({"mode": "ask", "preflightCommandPrefixes": ["tmux"]})"),
                             "--reviewer", reviewer("allow"), "--no-prompt", "-c", tmux_ls()},
                            env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "pi-sandbox: host-IPC execution denied: builtin subagents do not support host "
            "forwarding\n");
  r = run_process({binary, "run", "--cwd", scratch_.ws.string(), "--config", config(kRetry),
                   "--reviewer", reviewer("allow"), "--no-prompt", "-c", tmux_ls()},
                  env);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(refused_text()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: host-IPC retry refused: builtin subagents do not support host "
                       "forwarding\n"),
            std::string::npos)
      << r.err;
  if (unix_sockets_brokered()) {  // a subagent's host socket is never asked about either
    EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + tmux_socket_.string() +
                         ": builtin subagents do not support host forwarding"),
              std::string::npos)
        << r.err;
  }
  EXPECT_TRUE(audit().empty());
}

TEST_F(HostIpc, SshAddReachesATestAgentOnlyThroughAnApprovedRetry) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/ssh-agent", X_OK) == 0, "ssh-agent is not installed");
  const fs::path agent_socket = scratch_.root / "agent.sock";
  pid_t agent_pid = -1;
  ASSERT_NO_FATAL_FAILURE(start_ssh_agent(agent_socket, agent_pid));
  const std::string command = "SSH_AUTH_SOCK=" + agent_socket.string() + " ssh-add -l";

  RunResult r = scratch_.run(command);
  EXPECT_EQ(r.exit_code, 2);
  const std::string agent_refused = unix_sockets_brokered()
                                        ? "Error connecting to agent: Permission denied"
                                        : "Error connecting to agent: Operation not permitted";
  EXPECT_NE(r.err.find(agent_refused), std::string::npos) << r.err;

  r = scratch_.run(
      command, {"--config", config(kRetry), "--reviewer", reviewer("retry-only"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // ssh-add -l: 1 = the agent holds no identity
  EXPECT_EQ(r.out, "The agent has no identities.\n");
  EXPECT_NE(r.err.find(kBanner), std::string::npos) << r.err;

  r = scratch_.run(command,
                   {"--config", config(kRetry), "--reviewer", reviewer("deny"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  ::kill(agent_pid, SIGTERM);
}

TEST_F(HostIpc, AHostRunKeepsTheCallersSshAuthSockAndTokens) {
  // The environment filter (docs/security.md, "Environment") keeps SSH_AUTH_SOCK, so that the
  // sandboxed attempt meets the refused socket and the retry is offered; it removes GH_TOKEN
  // inside the sandbox, and the approved host run gets both from the caller.
  PI_SANDBOX_REQUIRE(::access("/usr/bin/ssh-agent", X_OK) == 0, "ssh-agent is not installed");
  const fs::path agent_socket = scratch_.root / "agent.sock";
  pid_t agent_pid = -1;
  ASSERT_NO_FATAL_FAILURE(start_ssh_agent(agent_socket, agent_pid));
  auto env = scratch_.env();
  env["SSH_AUTH_SOCK"] = agent_socket.string();
  env["GH_TOKEN"] = "t";
  const std::string command = "echo \"${GH_TOKEN-unset}\"; ssh-add -l";
  const std::vector<std::string> argv = {
      sandbox_binary(), "run",          "--cwd",      scratch_.ws.string(),
      "--config",       config(kRetry), "--reviewer", reviewer("retry-only"),
      "--no-prompt",    "-c",           command};
  const RunResult r = run_process(argv, env);
  EXPECT_EQ(r.exit_code, 1) << r.err;  // ssh-add -l: 1 = the agent holds no identity
  EXPECT_EQ(r.out, "unset\nt\nThe agent has no identities.\n");
  EXPECT_NE(
      r.err.find(unix_sockets_brokered() ? "Error connecting to agent: Permission denied"
                                         : "Error connecting to agent: Operation not permitted"),
      std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(kBanner), std::string::npos) << r.err;
  ::kill(agent_pid, SIGTERM);
}

TEST_F(HostIpc, AHostRunLeavesNothingRunningAndHoldsNothingOpen) {
  const RunResult r =
      scratch_.run("tmux -S " + tmux_socket_.string() + " has-session; sleep 617 & echo started",
                   {"--config", config(R"({"mode": "ask", "preflightCommandPrefixes": ["tmux"]})"),
                    "--reviewer", reviewer("allow"), "--no-prompt"});
  // run_process reads stdout to end of file: a surviving `sleep` would hold it open.
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "started\n");
  EXPECT_TRUE(wait_until_gone("sleep 617"));
}

TEST_F(HostIpc, KillingPiSandboxDuringAHostRunLeavesNothing) {
  // $((…)): the sleeps' command lines differ from pi-sandbox's own.
  const pid_t pid =
      spawn_process({sandbox_binary(), "run", "--cwd", scratch_.ws.string(), "--config",
                     config(R"({"mode": "ask", "preflightCommandPrefixes": ["tmux"]})"),
                     "--reviewer", reviewer("allow"), "--no-prompt", "-c",
                     tmux_ls() + "; sleep $((600 + 22)) & sleep $((600 + 23))"},
                    scratch_.env());
  for (int i = 0; i < 200 && !process_running("sleep 623"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(process_running("sleep 623"));
  ::kill(pid, SIGKILL);
  wait_process(pid);
  EXPECT_TRUE(wait_until_gone("sleep 622"));
  EXPECT_TRUE(wait_until_gone("sleep 623"));
}

TEST_F(HostIpc, TheHostRunGetsTheTimeoutAndIsKilledWhole) {
  const RunResult r =
      scratch_.run("tmux -S " + tmux_socket_.string() + " has-session; sleep 618; echo late",
                   {"--timeout", "1", "--config",
                    config(R"({"mode": "ask", "preflightCommandPrefixes": ["tmux"]})"),
                    "--reviewer", reviewer("allow"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pi-sandbox: command timed out after 1 seconds\n");
  EXPECT_TRUE(wait_until_gone("sleep 618"));
}

}  // namespace
}  // namespace pisandbox::testing
