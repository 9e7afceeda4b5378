// The front end: usage errors name the nearest spelling, --version names the commit, and
// `pi-sandbox policy` (text and JSON) shows the whole effective policy.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;

RunResult cli(const Scratch& s, std::vector<std::string> args) {
  args.insert(args.begin(), sandbox_binary());
  return run_process(args, s.env());
}

struct UsageCase {
  std::vector<std::string> args;
  std::string err;
};

TEST(Cli, UnknownCommandsAndOptionsNameTheNearestAndExit2) {
  Scratch s;
  const std::vector<UsageCase> cases = {
      {{"rnu"}, "pi-sandbox: unknown command 'rnu' (did you mean 'run'?)\n"},
      {{"polciy", "--json"}, "pi-sandbox: unknown command 'polciy' (did you mean 'policy'?)\n"},
      {{"frobnicate"}, "pi-sandbox: unknown command 'frobnicate' (see 'pi-sandbox --help')\n"},
      {{"--verison"}, "pi-sandbox: unknown option '--verison' (did you mean '--version'?)\n"},
      {{"approvals", "chek", "x.json"},
       "pi-sandbox: unknown command 'chek' for 'approvals' (did you mean 'check'?)\n"},
      {{"quarantine", "lsit"},
       "pi-sandbox: unknown command 'lsit' for 'quarantine' (did you mean 'list'?)\n"},
      {{"run", "--cwdd", "/tmp", "-c", "true"},
       "pi-sandbox: unknown option '--cwdd' for 'run' (did you mean '--cwd'?)\n"},
      {{"policy", "--jsno"},
       "pi-sandbox: unknown option '--jsno' for 'policy' (did you mean '--json'?)\n"},
      {{"approvals", "tail", "--follwo"},
       "pi-sandbox: unknown option '--follwo' for 'approvals tail' (did you mean '--follow'?)\n"},
      {{"doctor", "extra"},
       "pi-sandbox: unexpected argument 'extra' for 'doctor' (see 'pi-sandbox doctor --help')\n"},
  };
  for (const auto& c : cases) {
    const RunResult r = cli(s, c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << ": " << r.err;
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
}

TEST(Cli, VersionNamesTheVersionAndTheCommit) {
  Scratch s;
  const RunResult r = cli(s, {"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(
      std::regex_match(r.out, std::regex("pi-sandbox " PI_SANDBOX_VERSION
                                         " \\(commit ([0-9a-f]{12}(-dirty)?|unknown)\\)\n")))
      << r.out;
}

/// Whether `text` has `line` as one whole line.
bool has_line(const std::string& text, const std::string& line) {
  return text.starts_with(line + "\n") || text.find("\n" + line + "\n") != std::string::npos;
}

TEST(Cli, PolicyShowsTheConfigurationNetworkHostIpcAndApprovals) {
  Scratch s;
  const fs::path file = s.root / "config.json";
  write_file(file, R"({"network": {"allowedDomains": ["Example.com", "*.example.org:443"],
                                    "deniedDomains": ["*"]},
                       "hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["tmux"],
                                   "allowedSockets": ["/run/a.sock", "$PISB_UNSET_SOCK"]},
                       "approval": {"reviewer": ["/usr/bin/true", "--strict"],
                                    "reviewerTimeoutSeconds": 30, "questionTimeoutSeconds": 120}})");
  const RunResult text = cli(s, {"policy", "--cwd", s.ws.string(), "--config", file.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with("configuration: " + file.string() +
                                   "\n  subagents.provider: builtin\nworkspace (read-write): "))
      << text.out;
  for (const std::string& line : std::vector<std::string>{
           "  network.allowedDomains (connect without asking): example.com, *.example.org:443",
           "  network.deniedDomains (refused without asking): *",
           "  any other destination: asked for, connection by connection (docs/network.md)",
           "host sockets (a connection to one needs an approval unless listed):",
           "  hostIPC.allowedSockets: /run/a.sock",
           "  hostIPC.allowedSockets: $PISB_UNSET_SOCK (allows nothing: unset variable or not "
           "absolute)",
           "host IPC: hostIPC.mode ask (a command may run on the host, outside the sandbox, after "
           "an exact one-shot approval)",
           "  hostIPC.preflightCommandPrefixes: tmux",
           "  hostIPC.retryOnUnixSocketError: false",
           "approvals (hard denies, then the reviewer, then you on the terminal; "
           "docs/approvals.md):",
           "  approval.reviewer: /usr/bin/true --strict",
           "  approval.reviewerTimeoutSeconds: 30",
           "  approval.reviewerRetries: 2",
           "  approval.reviewerFailureMode: deny (a review that fails denies)",
           "  approval.grantTtlSeconds: 60",
           "  approval.questionTimeoutSeconds: 120",
           "  audit log: " + (s.home / ".pi/agent/logs/pi-sandbox-audit.jsonl").string(),
       })
    EXPECT_TRUE(has_line(text.out, line)) << line << "\nin:\n" << text.out;

  const RunResult as_json =
      cli(s, {"policy", "--cwd", s.ws.string(), "--config", file.string(), "--json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  const json p = json::parse(as_json.out);
  EXPECT_EQ(p["schema_version"], 1);
  EXPECT_EQ(p["configuration"], json({{"file", file.string()},
                                      {"subagents_provider", "builtin"},
                                      {"subagents_worker_extensions", json::array()}}));
  EXPECT_EQ(p["network"]["allowed_domains"], json::array({"example.com", "*.example.org:443"}));
  EXPECT_EQ(p["network"]["denied_domains"], json::array({"*"}));
  EXPECT_EQ(p["host_ipc"],
            json({{"mode", "ask"},
                  {"preflight_command_prefixes", json::array({"tmux"})},
                  {"retry_on_unix_socket_error", false},
                  {"allowed_sockets",
                   json::array({json({{"entry", "/run/a.sock"}, {"path", "/run/a.sock"}}),
                                json({{"entry", "$PISB_UNSET_SOCK"}, {"path", nullptr}})})}}));
  EXPECT_EQ(p["plan"]["unix_sockets"]["mode"], unix_sockets_brokered() ? "brokered" : "refused");
  EXPECT_EQ(p["approval"],
            json({{"reviewer", json::array({"/usr/bin/true", "--strict"})},
                  {"reviewer_timeout_seconds", 30},
                  {"reviewer_retries", 2},
                  {"reviewer_failure_mode", "deny"},
                  {"grant_ttl_seconds", 60},
                  {"question_timeout_seconds", 120},
                  {"audit_log", (s.home / ".pi/agent/logs/pi-sandbox-audit.jsonl").string()}}));
  for (const char* key :
       {"workspace", "home_read_allowed", "writable", "protected", "plan", "limits", "environment"})
    EXPECT_TRUE(p.contains(key)) << key;
}

TEST(Cli, PolicyWithoutAFileSaysTheDefaultsApply) {
  Scratch s;
  const RunResult text = cli(s, {"policy", "--cwd", s.ws.string()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with(
      "configuration: none found, the defaults (docs/configuration.md, \"Where\")\n"))
      << text.out;
  for (const std::string& line :
       std::vector<std::string>{"  network.allowedDomains (connect without asking): none",
                                "  approval.reviewer: none (--reviewer PROGRAM sets one for a "
                                "command)",
                                "  approval.questionTimeoutSeconds: 0 (no limit of its own: as "
                                "long as the command)"})
    EXPECT_TRUE(has_line(text.out, line)) << line << "\nin:\n" << text.out;
  const json p = json::parse(cli(s, {"policy", "--cwd", s.ws.string(), "--json"}).out);
  EXPECT_EQ(p["configuration"]["file"], nullptr);
  EXPECT_EQ(p["approval"]["reviewer"], nullptr);
  EXPECT_EQ(p["host_ipc"]["mode"], "off");
}

// `policy --platform macos --sbpl` prints the Seatbelt profile of the workspace on this Linux
// machine (docs/macos.md); the text and JSON reports carry the same profile in place of the
// Linux plans.
TEST(Cli, PolicyPrintsTheMacosProfileOnAnyPlatform) {
  Scratch s;
  const std::string ws = std::filesystem::canonical(s.ws).string();
  const RunResult sbpl = cli(s, {"policy", "--cwd", ws, "--platform", "macos", "--sbpl"});
  ASSERT_EQ(sbpl.exit_code, 0) << sbpl.err;
  EXPECT_EQ(sbpl.err, "");
  EXPECT_TRUE(sbpl.out.starts_with("(version 1)\n(deny default)\n")) << sbpl.out;
  EXPECT_TRUE(has_line(sbpl.out, "  (subpath \"" + ws + "\")")) << sbpl.out;
  EXPECT_TRUE(has_line(sbpl.out, "  (literal \"" + ws + "/.bashrc\")")) << sbpl.out;
  EXPECT_TRUE(has_line(sbpl.out, "  (remote ip \"localhost:3128\")")) << sbpl.out;
  EXPECT_EQ(cli(s, {"policy", "--cwd", ws, "--sbpl"}).out, sbpl.out);  // implies macos

  const json p = json::parse(cli(s, {"policy", "--cwd", ws, "--platform", "macos", "--json"}).out);
  EXPECT_EQ(p["platform"], "macos");
  EXPECT_EQ(p["seatbelt"]["profile"], sbpl.out);
  EXPECT_EQ(p["workspace"], ws);
  EXPECT_FALSE(p.contains("plan"));
  const RunResult text = cli(s, {"policy", "--cwd", ws, "--platform", "macos"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(has_line(text.out, "  (version 1)")) << text.out;
  EXPECT_FALSE(text.out.contains("mount plan:")) << text.out;
  EXPECT_TRUE(cli(s, {"policy", "--cwd", ws, "--platform", "linux"}).out.contains("mount plan:"));

  const RunResult both = cli(s, {"policy", "--cwd", ws, "--platform", "linux", "--sbpl"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_EQ(both.err,
            "pi-sandbox: --sbpl prints the macOS Seatbelt profile: it cannot be combined with "
            "--platform linux\n");
  EXPECT_EQ(both.out, "");
  const RunResult windows = cli(s, {"policy", "--cwd", ws, "--platform", "windows"});
  EXPECT_EQ(windows.exit_code, 2);
  EXPECT_EQ(windows.err,
            "--platform: windows not in {linux,macos}\nRun with --help for more information.\n");
  const RunResult json_too = cli(s, {"policy", "--cwd", ws, "--sbpl", "--json"});
  EXPECT_EQ(json_too.exit_code, 2);
  EXPECT_EQ(json_too.err,
            "pi-sandbox: --sbpl prints the Seatbelt profile as text: it cannot be combined with "
            "--json (the JSON carries it as .seatbelt.profile)\n");
}

// A one-connection SOCKS5 server on 127.0.0.1 that takes the username/password method (RFC
// 1929) and records what the client sent: what `pi-sandbox proxy-connect` meets on macOS, where
// the command's proxy is on the host's loopback with a per-command credential (docs/macos.md).
class SocksStub {
 public:
  /// `password`: the one accepted; `no_auth`: the stub selects no authentication (METHOD 0) as
  /// the Linux sandbox's listener does, and closes.
  explicit SocksStub(std::string password, bool no_auth = false)
      : password_(std::move(password)), no_auth_(no_auth) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), length), 0);
    EXPECT_EQ(::listen(listener_, 1), 0);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~SocksStub() { finish(); }
  SocksStub(const SocksStub&) = delete;
  SocksStub& operator=(const SocksStub&) = delete;

  [[nodiscard]] std::uint16_t port() const { return port_; }
  /// Stops the stub and returns every byte the client sent.
  std::string finish() {
    if (thread_.joinable()) {
      ::shutdown(listener_, SHUT_RDWR);
      thread_.join();
      ::close(listener_);
    }
    return received_;
  }

 private:
  void serve() {
    const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    const timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const auto take = [&](std::size_t n) {
      std::string out(n, '\0');
      std::size_t got = 0;
      while (got < n) {
        const ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
      }
      out.resize(got);
      received_ += out;
      return out;
    };
    const auto give = [&](const std::string& bytes) {
      (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    };
    take(3);
    if (no_auth_) {
      give(std::string{5, 0});
      ::close(fd);
      return;
    }
    give(std::string{5, 2});
    const std::string head = take(2);
    const std::string user = head.size() == 2 ? take(static_cast<unsigned char>(head[1])) : "";
    const std::string length = take(1);
    const std::string pass = length.size() == 1 ? take(static_cast<unsigned char>(length[0])) : "";
    const bool accepted = user == "pi-sandbox" && pass == password_;
    give(std::string{1, static_cast<char>(accepted ? 0 : 1)});
    if (accepted) {
      const std::string request = take(5);
      if (request.size() == 5) take(static_cast<unsigned char>(request[4]) + 2u);
      give(std::string{5, 0, 0, 1, 0, 0, 0, 0, 0, 0} + "pong\n");
    }
    ::close(fd);
  }

  std::string password_;
  bool no_auth_ = false;
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::string received_;
};

TEST(Cli, ProxyConnectSendsTheCredentialThatAllProxyNames) {
  Scratch s;
  const std::string secret = "0123456789abcdef0123456789abcdef";
  const std::string userpass = std::string{1, 10} + "pi-sandbox" + std::string{32} + secret;
  const std::string request = std::string{5, 1, 0, 3, 8} + "web.test" + std::string{0, 7};
  {
    SocksStub stub(secret);
    auto env = s.env();
    env["ALL_PROXY"] =
        "socks5h://pi-sandbox:" + secret + "@127.0.0.1:" + std::to_string(stub.port());
    const RunResult r = run_process({sandbox_binary(), "proxy-connect", "web.test", "7"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "pong\n");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(stub.finish(), (std::string{5, 1, 2} + userpass + request));
  }
  {
    SocksStub stub("another password");
    auto env = s.env();
    env["ALL_PROXY"] =
        "socks5h://pi-sandbox:" + secret + "@127.0.0.1:" + std::to_string(stub.port());
    const RunResult r = run_process({sandbox_binary(), "proxy-connect", "web.test", "7"}, env);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "pi-sandbox: proxy-connect: the SOCKS5 proxy at 127.0.0.1:" +
                         std::to_string(stub.port()) + " refused the credential in ALL_PROXY\n");
    EXPECT_EQ(stub.finish(), (std::string{5, 1, 2} + userpass));
  }
  {
    SocksStub stub(secret, /*no_auth=*/true);
    auto env = s.env();
    env["ALL_PROXY"] =
        "socks5h://pi-sandbox:" + secret + "@127.0.0.1:" + std::to_string(stub.port());
    const RunResult r = run_process({sandbox_binary(), "proxy-connect", "web.test", "7"}, env);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "pi-sandbox: proxy-connect: the SOCKS5 proxy at 127.0.0.1:" +
                         std::to_string(stub.port()) +
                         " takes no username and password, but ALL_PROXY gives them\n");
  }
}

}  // namespace
}  // namespace pisandbox::testing
