// Unix sockets inside the sandbox and brokered to the host (docs/host-ipc.md, "Host sockets";
// docs/security.md, "Unix sockets"): the sandbox's own sockets just work (private /tmp, the
// workspace, abstract names, Python's forkserver and Manager); a host socket is reached only
// through hostIPC.allowedSockets or an approval, never by a path the sandbox can see; a real
// ssh-agent is used through the broker.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;

/// A server on the host: answers each connection on `socket` with "host\n" and counts them in
/// `<socket>.count`.
const char* const kHostServer = R"(import os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX)
s.bind(path); s.listen(8)
n = 0
while True:
    c, _ = s.accept(); n += 1
    open(path + '.count', 'w').write(str(n))
    c.sendall(b'host\n'); c.close()
)";

/// A client: connects to argv[1] and prints what it reads, or the error.
const char* const kClient = R"(import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(s.recv(64).decode().strip())
except OSError as e:
    print(type(e).__name__, e.errno)
)";

class UnixSockets : public ::testing::Test {
 protected:
  void SetUp() override {
    PI_SANDBOX_REQUIRE(unix_sockets_brokered(),
                       "this kernel cannot broker Unix sockets (see pi-sandbox doctor)");
    write_file(scratch_.root / "client.py", kClient);
    write_file(scratch_.root / "server.py", kHostServer);
  }
  void TearDown() override {
    for (pid_t pid : servers_) {
      ::kill(pid, SIGTERM);
      wait_process(pid);
    }
  }

  /// Starts kHostServer on `socket` and waits for the socket file.
  void host_server(const fs::path& socket) {
    servers_.push_back(
        spawn_process({"/usr/bin/python3", (scratch_.root / "server.py").string(), socket}));
    for (int i = 0; i < 200 && !fs::exists(socket); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(fs::exists(socket));
  }
  /// How many connections the host server on `socket` accepted.
  static std::string accepted(const fs::path& socket) {
    const std::string count = read_file(socket.string() + ".count");
    return count.empty() ? "0" : count;
  }
  std::string client(const fs::path& socket) const {
    return "/usr/bin/python3 " + (scratch_.root / "client.py").string() + " " + socket.string();
  }
  std::string config(const std::string& host_ipc) const {
    const fs::path path = scratch_.root / "config.json";
    write_file(path, R"({"hostIPC": )" + host_ipc + "}");
    return path.string();
  }
  std::string reviewer(const std::string& outcome) const {
    const fs::path script = scratch_.root / (outcome + ".sh");
    write_file(script, "#!/bin/sh\ncat >" + (scratch_.root / (outcome + ".request")).string() +
                           "\necho '{\"outcome\":\"" + outcome +
                           "\",\"risk_level\":\"low\",\"rationale\":\"reviewer said " + outcome +
                           "\"}'\n");
    ::chmod(script.c_str(), 0755);
    return script.string();
  }
  std::vector<json> audit() const {
    std::vector<json> lines;
    std::istringstream in(
        read_file(scratch_.home / ".pi" / "agent" / "logs" / "pi-sandbox-audit.jsonl"));
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  Scratch scratch_;
  std::vector<pid_t> servers_;
};

TEST_F(UnixSockets, AServerAndClientOnASocketInThePrivateTmpWork) {
  const RunResult r = scratch_.run(
      "/usr/bin/python3 -c \"\nimport os, socket\ns = socket.socket(socket.AF_UNIX)\n"
      "s.bind('/tmp/t.sock'); s.listen(1)\nif os.fork() == 0:\n"
      "    c = socket.socket(socket.AF_UNIX); c.connect('/tmp/t.sock'); c.sendall(b'ping')\n"
      "    os._exit(0)\na, _ = s.accept(); print(a.recv(4).decode())\"");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ping\n");
  EXPECT_EQ(r.err.find("pi-sandbox: host socket refused"), std::string::npos) << r.err;
}

TEST_F(UnixSockets, SocketsTheSandboxBindsInTheWorkspaceAndAbstractNamesAreItsOwn) {
  const RunResult r = scratch_.run(
      "/usr/bin/python3 -c \"\nimport os, socket\nfor name in ('ws.sock', '\\0pisb-abstract'):\n"
      "    s = socket.socket(socket.AF_UNIX); s.bind(name); s.listen(1)\n"
      "    c = socket.socket(socket.AF_UNIX); c.connect(name)\n"
      "    a, _ = s.accept(); c.sendall(b'ok'); print(a.recv(2).decode())\"");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok\nok\n");
  EXPECT_EQ(r.err.find("pi-sandbox: host socket refused"), std::string::npos) << r.err;
  struct stat st {};
  ASSERT_EQ(::lstat((scratch_.ws / "ws.sock").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));  // the workspace is the host's: the file stays
}

TEST_F(UnixSockets, PythonsForkserverAndAManagerWork) {
  // A file, not -c: forkserver's workers import the main module.
  write_file(scratch_.ws / "pool.py",
             "import multiprocessing as mp\n"
             "def square(x): return x * x\nif __name__ == '__main__':\n"
             "    mp.set_start_method('forkserver')\n"
             "    with mp.Pool(2) as pool: print(pool.map(square, [1, 2, 3]))\n"
             "    with mp.Manager() as m:\n        d = m.dict(); d['k'] = 'v'; print(dict(d))\n");
  const RunResult r = scratch_.run("/usr/bin/python3 pool.py");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[1, 4, 9]\n{'k': 'v'}\n");
}

TEST_F(UnixSockets, DatagramSocketsAreRefused) {
  const RunResult r = scratch_.run(
      "/usr/bin/python3 -c \"\nimport socket\nfor t in (socket.SOCK_DGRAM, socket.SOCK_RAW):\n"
      "  for make in (lambda: socket.socket(socket.AF_UNIX, t), lambda: socket.socketpair("
      "socket.AF_UNIX, t)):\n"
      "    try: make(); print('made')\n    except OSError as e: print(e.errno)\"");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n1\n1\n1\n");  // EPERM; SOCK_RAW is a datagram socket on AF_UNIX
}

TEST_F(UnixSockets, AHostSocketIsRefusedWithOneLineAndNeverConnected) {
  const fs::path socket = scratch_.root / "host.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  const RunResult r = scratch_.run(client(socket), {"--no-prompt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "PermissionError 13\n");
  EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + socket.string() + ": "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(accepted(socket), "0");
}

TEST_F(UnixSockets, ASymlinkInTheWorkspaceIsDecidedAsTheSocketItLeadsTo) {
  const fs::path socket = scratch_.root / "host.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  fs::create_symlink(socket, scratch_.ws / "link.sock");
  const RunResult r = scratch_.run(client(scratch_.ws / "link.sock"), {"--no-prompt"});
  EXPECT_EQ(r.out, "PermissionError 13\n");
  EXPECT_NE(r.err.find("host socket refused: " + socket.string() + ": "), std::string::npos)
      << r.err;
  EXPECT_EQ(accepted(socket), "0");
}

TEST_F(UnixSockets, AnAllowedSocketIsConnectedWithoutAsking) {
  const fs::path socket = scratch_.root / "host.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  // By path, and through a variable of the caller's environment.
  for (const std::string& entry : {socket.string(), std::string("$PISB_TEST_SOCK")}) {
    const std::string cfg = config(R"({"allowedSockets": [")" + entry + R"("]})");
    const RunResult r = run_process({sandbox_binary(), "run", "--config", cfg, "--no-prompt",
                                     "--cwd", scratch_.ws.string(), "-c", client(socket)},
                                    [&] {
                                      auto env = scratch_.env();
                                      env["PISB_TEST_SOCK"] = socket.string();
                                      return env;
                                    }());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "host\n") << entry;
    EXPECT_EQ(r.err.find("pi-sandbox: host socket refused"), std::string::npos) << r.err << entry;
  }
  EXPECT_EQ(accepted(socket), "2");
}

TEST_F(UnixSockets, AHostSocketInTheHiddenHomeNeedsADecisionAndThenWorks) {
  const fs::path socket = scratch_.home / ".sock-dir" / "agent.sock";
  fs::create_directories(socket.parent_path());
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  RunResult r = scratch_.run(client(socket), {"--no-prompt"});
  EXPECT_EQ(r.out, "PermissionError 13\n");  // not FileNotFoundError: the host has it
  r = scratch_.run(
      client(socket),
      {"--config", config(R"({"allowedSockets": ["~/.sock-dir/agent.sock"]})"), "--no-prompt"});
  EXPECT_EQ(r.out, "host\n") << r.err;
  EXPECT_EQ(accepted(socket), "1");
}

TEST_F(UnixSockets, TheReviewersApprovalIsOneShotAndAudited) {
  const fs::path socket = scratch_.root / "host.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  RunResult r = scratch_.run(client(socket) + "; " + client(socket),
                             {"--reviewer", reviewer("allow"), "--no-prompt"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "host\nhost\n");
  EXPECT_EQ(accepted(socket), "2");
  const std::string request_text = read_file(scratch_.root / "allow.request");
  ASSERT_TRUE(json::accept(request_text)) << request_text;
  const json request = json::parse(request_text);
  ASSERT_TRUE(request.is_object()) << request_text;
  EXPECT_EQ(request["surface"], "host-ipc") << request.dump();
  EXPECT_EQ(request["operation"], "connect-unix");
  EXPECT_EQ(request["path"], socket.string());
  EXPECT_EQ(request["matchedPolicy"]["rule"], "host-socket");
  // One approval per connection: two reviews, two grants issued and consumed.
  std::vector<std::string> events;
  for (const json& line : audit()) {
    EXPECT_EQ(line.value("path", ""), socket.string()) << line.dump();
    events.push_back(line.value("event", ""));
  }
  EXPECT_EQ(events,
            (std::vector<std::string>{"review_decision", "grant_issued", "grant_consumed",
                                      "review_decision", "grant_issued", "grant_consumed"}));

  r = scratch_.run(client(socket), {"--reviewer", reviewer("deny"), "--no-prompt"});
  EXPECT_EQ(r.out, "PermissionError 13\n");
  EXPECT_NE(r.err.find("host socket refused: " + socket.string() + ": reviewer said deny"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(accepted(socket), "2");
}

TEST_F(UnixSockets, SshAddUsesARealAgentAllowedByTheListAndIsRefusedOtherwise) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/ssh-agent", X_OK) == 0, "ssh-agent is not installed");
  const fs::path agent_socket = scratch_.root / "agent.sock";
  const RunResult agent = run_process({"/usr/bin/ssh-agent", "-a", agent_socket.string()});
  ASSERT_EQ(agent.exit_code, 0) << agent.err;
  const auto pid_at = agent.out.find("SSH_AGENT_PID=");
  ASSERT_NE(pid_at, std::string::npos);
  const pid_t agent_pid = std::atoi(agent.out.c_str() + pid_at + 14);
  auto env = scratch_.env();
  env["SSH_AUTH_SOCK"] = agent_socket.string();
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {sandbox_binary(), "run", "--no-prompt", "--cwd",
                                     scratch_.ws.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", "/usr/bin/ssh-add", "-l"});
    return run_process(argv, env);
  };
  RunResult r = run({"--config", config(R"({"allowedSockets": ["$SSH_AUTH_SOCK"]})")});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // 1: the agent holds no identity
  EXPECT_EQ(r.out, "The agent has no identities.\n");
  r = run({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Error connecting to agent: Permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("host socket refused: " + agent_socket.string()), std::string::npos);
  ::kill(agent_pid, SIGTERM);
}

TEST_F(UnixSockets, GitSignsACommitThroughAnApprovedGpgAgentAndARefusalOffersTheHostRun) {
  PI_SANDBOX_REQUIRE(::access("/usr/bin/gpg", X_OK) == 0 && ::access("/usr/bin/gpgconf", X_OK) == 0,
                     "gpg is not installed");
  const fs::path gnupg = scratch_.root / "gnupg";
  fs::create_directories(gnupg);
  fs::permissions(gnupg, fs::perms::owner_all);
  auto env = scratch_.env();
  env["GNUPGHOME"] = gnupg.string();
  const RunResult key =
      run_process({"/usr/bin/gpg", "--batch", "--passphrase", "", "--quick-gen-key",
                   "Test <t@example.com>", "ed25519", "sign", "never"},
                  env);
  ASSERT_EQ(key.exit_code, 0) << key.err;
  const RunResult socket = run_process({"/usr/bin/gpgconf", "--list-dirs", "agent-socket"}, env);
  const std::string agent = socket.out.substr(0, socket.out.find('\n'));
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"init", "-q"},
                                             {"config", "user.email", "t@example.com"},
                                             {"config", "user.name", "T"},
                                             {"config", "commit.gpgsign", "true"},
                                             {"config", "user.signingkey", "t@example.com"}}) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", scratch_.ws.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    ASSERT_EQ(run_process(argv, env).exit_code, 0);
  }
  const auto commit = [&](const std::string& message, std::vector<std::string> extra) {
    std::vector<std::string> argv = {sandbox_binary(), "run", "--no-prompt", "--cwd",
                                     scratch_.ws.string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"-c", "git commit -q --allow-empty -m " + message});
    return run_process(argv, env);
  };
  // Refused (nobody to ask): gpg's own words name no socket.
  RunResult r = commit("refused", {});
  EXPECT_EQ(r.exit_code, 128);
  EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + agent + ": "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("error: gpg failed to sign the data"), std::string::npos) << r.err;
  // Approved: signed inside the sandbox.
  r = commit("approved", {"--reviewer", reviewer("allow")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const RunResult log = run_process(
      {"/usr/bin/git", "-C", scratch_.ws.string(), "log", "-1", "--format=%s %G?"}, env);
  EXPECT_EQ(log.out, "approved G\n");  // G: a good signature
  // Refused socket, with retryOnUnixSocketError: the refusal itself offers the host run.
  const fs::path retry = scratch_.root / "retry-only.sh";
  write_retry_only_reviewer(retry);
  r = commit("on-host", {"--config", config(R"({"mode": "ask", "retryOnUnixSocketError": true})"),
                         "--reviewer", retry.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--- pi-sandbox: approved host-IPC retry (outside OS sandbox) ---"),
            std::string::npos)
      << r.err;
  const RunResult last = run_process(
      {"/usr/bin/git", "-C", scratch_.ws.string(), "log", "-1", "--format=%s %G?"}, env);
  EXPECT_EQ(last.out, "on-host G\n");
  run_process({"/usr/bin/gpgconf", "--kill", "gpg-agent"}, env);
}

TEST_F(UnixSockets, AnAllowedEntryTheCommandCanWriteAllowsNothing) {
  const fs::path socket = scratch_.root / "host.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  // Listed in the workspace: the command replaces the name with a link to the host's socket.
  const std::string cfg =
      config(R"({"allowedSockets": [")" + (scratch_.ws / "dev.sock").string() + R"("]})");
  const RunResult r =
      scratch_.run("ln -s " + socket.string() + " dev.sock && " + client(scratch_.ws / "dev.sock"),
                   {"--config", cfg, "--no-prompt"});
  EXPECT_EQ(r.out, "PermissionError 13\n") << r.err;
  EXPECT_NE(r.err.find("host socket refused: " + socket.string() + ": "), std::string::npos)
      << r.err;
  EXPECT_EQ(accepted(socket), "0");
}

TEST_F(UnixSockets, AnAllowedSocketInADotDirectoryWorksWhenTheHomeIsTheWorkspace) {
  // The home as the workspace binds ~/.ssh read-only (docs/security.md, "The workspace is the
  // home"): an entry there allows, by path and through $SSH_AUTH_SOCK.
  const fs::path socket = scratch_.home / ".ssh" / "agent.sock";
  const fs::path other = scratch_.home / ".ssh" / "other.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  ASSERT_NO_FATAL_FAILURE(host_server(other));
  for (const std::string& entry : {socket.string(), std::string("$SSH_AUTH_SOCK")}) {
    const std::string cfg = config(R"({"allowedSockets": [")" + entry + R"("]})");
    auto env = scratch_.env();
    env["SSH_AUTH_SOCK"] = socket.string();
    const RunResult r =
        run_process({sandbox_binary(), "run", "--config", cfg, "--no-prompt", "--cwd",
                     scratch_.home.string(), "-c", client(socket) + "; " + client(other)},
                    env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "host\nPermissionError 13\n") << entry << "\n" << r.err;
    EXPECT_EQ(r.err.find("host socket refused: " + socket.string()), std::string::npos)
        << r.err << entry;
    EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + other.string() + ": "),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(accepted(socket), "2");
  EXPECT_EQ(accepted(other), "0");
}

TEST_F(UnixSockets, AnAllowedEntryInAWritableDirectoryOfTheHomeWorkspaceAllowsNothing) {
  // ~/ws stays read-write where the workspace is the home: the command could put a socket of
  // its choice at the listed name.
  const fs::path socket = scratch_.ws / "dev.sock";
  ASSERT_NO_FATAL_FAILURE(host_server(socket));
  const std::string cfg = config(R"({"allowedSockets": [")" + socket.string() + R"("]})");
  const RunResult r = scratch_.run(client(socket), {"--config", cfg, "--no-prompt"}, scratch_.home);
  EXPECT_EQ(r.out, "PermissionError 13\n") << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + socket.string() + ": "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(accepted(socket), "0");
  // `policy` says why the entry does nothing.
  const RunResult policy =
      run_process({sandbox_binary(), "policy", "--config", cfg, "--cwd", scratch_.home.string()},
                  scratch_.env());
  EXPECT_NE(policy.out.find("  hostIPC.allowedSockets: " + socket.string() +
                            " (allows nothing: the command can write there, and could put "
                            "another socket at that name)\n"),
            std::string::npos)
      << policy.out;
}

TEST_F(UnixSockets, ManyConnectsAtOnceAllGetTheirAnswer) {
  // More at once than the broker makes at once (64): the rest wait, none is refused.
  write_file(scratch_.ws / "many.py",
             "import socket, threading\ns = socket.socket(socket.AF_UNIX)\n"
             "s.bind('/tmp/m.sock'); s.listen(512)\nresults = []\n"
             "def one():\n    c = socket.socket(socket.AF_UNIX)\n"
             "    try: c.connect('/tmp/m.sock'); results.append('ok')\n"
             "    except OSError as e: results.append(e.errno)\n"
             "threads = [threading.Thread(target=one) for _ in range(200)]\n"
             "[t.start() for t in threads]; [t.join() for t in threads]\n"
             "print(results.count('ok'), len(results))\n");
  const RunResult r = scratch_.run("/usr/bin/python3 many.py");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "200 200\n");
}

}  // namespace
}  // namespace pisandbox::testing
