// The per-command proxy end to end (docs/network.md; docs/cases.md, C-05 to C-08, C-13): real curl,
// git, ssh and Python clients inside the sandbox, through the real proxy, to real test
// servers on 203.0.113.2 in a network namespace of their own.
//
// The test builds its own network: a holder process in a new user, network and mount
// namespace (so it works unprivileged too) with a veth pair to a second network namespace
// where the servers run, and /etc/hosts bind-mounted with the test names. Every pi-sandbox
// run joins the holder's namespaces with nsenter, so the supervisor resolves the test names
// and routes to the servers, while the host's own network is never touched.
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "deny_userns.hpp"
#include "harness.hpp"
#include "test_network.hpp"

namespace pisandbox::testing {
namespace {

const char* const kServers =
    R"PY(# Test servers for the network integration tests, run inside the server's network
# namespace on 203.0.113.2: HTTP on 80, an SSH banner on 22, TCP echo on 7.
import asyncio, os, resource, sys

ROOT = sys.argv[1]          # directory with repo.git (dumb HTTP) and where logs go
BODY = bytes((i * 7 + 3) % 251 for i in range(200_000))

def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))

async def read_head(reader):
    data = await reader.readuntil(b"\r\n\r\n")
    lines = data.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ")
    headers = [l for l in lines[1:] if l]
    return method, target, headers

async def http(reader, writer):
    try:
        while True:
            try:
                method, target, headers = await read_head(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            if target == "/close":
                # Close-delimited body, closed right after the last byte (the truncation case).
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                             b"Connection: close\r\n\r\n" + BODY)
                await writer.drain()
                writer.close()
                return
            if target == "/echo-headers":
                body = ("\n".join(headers) + "\n").encode()
            elif target.startswith("/repo.git/"):
                path = os.path.join(ROOT, target.split("?")[0].lstrip("/"))
                if ".." in target or not os.path.isfile(path):
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                    await writer.drain()
                    continue
                body = open(path, "rb").read()
            else:
                body = b"hello from web.test\n"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
                         % len(body) + body)
            await writer.drain()
    finally:
        writer.close()

async def ssh_banner(reader, writer):
    writer.write(b"SSH-2.0-PiSandboxTest\r\n")
    await writer.drain()
    try:
        line = await asyncio.wait_for(reader.readline(), 10)
    except Exception:
        line = b""
    with open(os.path.join(ROOT, "ssh.log"), "ab") as log:
        log.write(line.split(b"\r")[0] + b"\n")
    writer.close()

async def echo(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()

# A parent (company) proxy: CONNECT only. 3129 open, 3130 wants Basic credentials
# alice / "p@ss:w rd", 3131 refuses everything (403). Each request is a line in parent.log:
# "<port> <request line> auth=<Proxy-Authorization or ->". It resolves behind.test itself (the
# sandbox's host cannot: that name is not in /etc/hosts), other names as usual.
PARENT_NAMES = {"behind.test": "203.0.113.2"}
PARENT_AUTH = "Basic YWxpY2U6cEBzczp3IHJk"

async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.write_eof()
    except (ConnectionError, OSError):
        pass

async def parent(reader, writer, port):
    try:
        method, target, headers = await read_head(reader)
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        writer.close()
        return
    auth = next((h.split(":", 1)[1].strip() for h in headers
                 if h.lower().startswith("proxy-authorization:")), None)
    with open(os.path.join(ROOT, "parent.log"), "a") as log:
        log.write("%d %s %s auth=%s\n" % (port, method, target, auth or "-"))
    def answer(status):
        writer.write(b"HTTP/1.1 " + status + b"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    if port == 3131:
        answer(b"403 Forbidden")
    elif port == 3130 and auth != PARENT_AUTH:
        writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                     b"Proxy-Authenticate: Basic realm=\"corp\"\r\nContent-Length: 0\r\n\r\n")
    elif method != "CONNECT":
        answer(b"405 Method Not Allowed")
    else:
        host, _, number = target.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(
                PARENT_NAMES.get(host, host), int(number))
        except OSError:
            answer(b"502 Bad Gateway")
        else:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
            up_writer.close()
    await writer.drain()
    writer.close()

async def main():
    raise_fd_limit()
    servers = [await asyncio.start_server(http, "203.0.113.2", 80, backlog=2048),
               await asyncio.start_server(ssh_banner, "203.0.113.2", 22, backlog=128),
               await asyncio.start_server(echo, "203.0.113.2", 7, backlog=2048)]
    for port in (3129, 3130, 3131):
        servers.append(await asyncio.start_server(
            lambda r, w, port=port: parent(r, w, port), "203.0.113.2", port, backlog=128))
    open(os.path.join(ROOT, "servers.ready"), "w").close()
    await asyncio.gather(*(s.serve_forever() for s in servers))

asyncio.run(main())
)PY";

// dual.test: a dead IPv6 address (net_setup.sh loses its packets) and the live IPv4 server;
// gone.test: an address on the test link that nobody has; unrouted.test: no route at all.
const char* const kHosts =
    "203.0.113.2 web.test git.test ssh.test blocked.test asked.test parent.test\n"
    "127.0.0.1 local.test\n"
    "10.1.2.3 private.test\n"
    "2001:db8::dead dual.test\n"
    "203.0.113.2 dual.test\n"
    "203.0.113.9 gone.test\n"
    "198.51.100.7 unrouted.test\n";

const char* const kConfig = R"({"network": {
  "allowedDomains": ["web.test", "git.test", "ssh.test", "local.test", "behind.test",
                     "dual.test", "gone.test", "unrouted.test"],
  "deniedDomains": ["blocked.test"],
  "deniedDomainReasons": {"blocked.test": "the test's policy keeps it out"}}})";

/// One network for the whole suite.
class Network {
 public:
  Network() {
    write_file(scratch.root / "config.json", kConfig);
    make_repository();
    for (const auto& [name, outcome] : {std::pair{"allow", "allow"}, std::pair{"deny", "deny"}}) {
      const fs::path script = scratch.root / (std::string(name) + ".sh");
      write_file(script, "#!/bin/sh\ncat >> " + (scratch.root / "reviewed").string() +
                             "\necho >> " + (scratch.root / "reviewed").string() +
                             "\necho '{\"outcome\":\"" + outcome +
                             "\",\"risk_level\":\"low\",\"rationale\":\"reviewer said " + outcome +
                             "\"}'\n");
      ::chmod(script.c_str(), 0755);
    }
    ready = test_network.start(scratch.root, kHosts, kServers);
  }

  /// `pi-sandbox run` inside the test network: --config, --no-prompt, `extra`, -c `command`;
  /// pi-sandbox's own environment is the scratch's, without the test runner's proxy variables,
  /// plus `env`.
  RunResult run(const std::string& command, const std::vector<std::string>& extra = {},
                const std::map<std::string, std::string>& env = {}) const {
    std::vector<std::string> argv = wrapper;
    for (const std::string& word :
         {sandbox_binary(), std::string("run"), std::string("--cwd"), scratch.ws.string(),
          std::string("--config"), (scratch.root / "config.json").string(),
          std::string("--no-prompt")})
      argv.push_back(word);
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("-c");
    argv.push_back(command);
    std::map<std::string, std::string> environment = TestNetwork::without_proxies(scratch.env());
    for (const auto& [name, value] : env) environment[name] = value;
    return run_process(test_network.inside(argv), environment);
  }
  std::string reviewer(const std::string& name) const {
    return (scratch.root / (name + ".sh")).string();
  }
  /// TCP connections the test network's side (where the supervisor and its proxy run) has
  /// opened so far: `Tcp: ActiveOpens` of /proc/<holder>/net/snmp (one per connect(2) that
  /// sent a SYN); -1 when it cannot be read.
  long active_opens() const {
    std::istringstream in(
        read_file("/proc/" + std::to_string(test_network.holder()) + "/net/snmp"));
    std::vector<std::string> names;
    for (std::string line; std::getline(in, line);) {
      if (!line.starts_with("Tcp: ")) continue;
      std::istringstream words(line.substr(5));
      std::vector<std::string> fields;
      for (std::string word; words >> word;) fields.push_back(word);
      if (names.empty()) {
        names = fields;
        continue;
      }
      for (std::size_t i = 0; i < names.size() && i < fields.size(); ++i)
        if (names[i] == "ActiveOpens") return std::stol(fields[i]);
    }
    return -1;
  }
  /// The requests the reviewers received, one JSON object per line.
  std::vector<std::string> reviewed() const {
    std::vector<std::string> lines;
    std::istringstream in(read_file(scratch.root / "reviewed"));
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) lines.push_back(line);
    return lines;
  }

  Scratch scratch;
  /// Put before pi-sandbox in run() (the weaker sandbox's tests: deny_userns.hpp).
  std::vector<std::string> wrapper;
  TestNetwork test_network;
  bool ready = false;
  std::string head;  // the test repository's commit

 private:
  void make_repository() {
    const fs::path repo = scratch.root / "repo.git";
    const fs::path work = scratch.root / "repo-work";
    const std::string git = "/usr/bin/git";
    const std::map<std::string, std::string> env = {
        {"GIT_AUTHOR_NAME", "t"},     {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
        {"GIT_COMMITTER_NAME", "t"},  {"GIT_COMMITTER_EMAIL", "t@example.invalid"},
        {"GIT_CONFIG_NOSYSTEM", "1"}, {"HOME", scratch.home.string()}};
    run_process({git, "init", "-q", "-b", "main", work.string()}, env);
    write_file(work / "README", "test\n");
    run_process({git, "-C", work.string(), "add", "README"}, env);
    run_process({git, "-C", work.string(), "commit", "-q", "-m", "one"}, env);
    run_process({git, "clone", "-q", "--bare", work.string(), repo.string()}, env);
    run_process({git, "-C", repo.string(), "update-server-info"}, env);
    head = run_process({git, "-C", repo.string(), "rev-parse", "HEAD"}, env).out;
    if (!head.empty()) head.pop_back();
  }
};

class NetworkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { network_ = new Network(); }
  static void TearDownTestSuite() {
    delete network_;
    network_ = nullptr;
  }
  void SetUp() override {
    PI_SANDBOX_REQUIRE(::access("/usr/bin/curl", X_OK) == 0, "curl is not installed");
    PI_SANDBOX_REQUIRE(::access("/usr/sbin/ip", X_OK) == 0 || ::access("/sbin/ip", X_OK) == 0,
                       "iproute2 is not installed");
    PI_SANDBOX_REQUIRE(network_->ready,
                       "could not build the test network (user+network namespaces, veth)");
    fs::remove(network_->scratch.root / "reviewed");
  }
  static Network* network_;
};

Network* NetworkTest::network_ = nullptr;

const std::string kHello = "hello from web.test\n";

TEST_F(NetworkTest, CurlThroughConnect) {
  const RunResult r = network_->run("curl -sS --proxytunnel http://web.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
}

TEST_F(NetworkTest, CurlThroughAbsoluteForm) {
  const RunResult r = network_->run("curl -sS http://web.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
}

TEST_F(NetworkTest, CurlThroughSocks5h) {
  const RunResult r = network_->run("curl -sS -x \"$ALL_PROXY\" http://web.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
}

TEST_F(NetworkTest, WithoutTheProxyThereIsNoNetwork) {
  const RunResult r = network_->run("curl -sS --noproxy '*' http://web.test/hello");
  EXPECT_EQ(r.exit_code, 7) << r.err;  // couldn't connect: the sandbox has only loopback
  EXPECT_EQ(r.out, "");
}

TEST_F(NetworkTest, AbsoluteFormStripsHopByHopHeadersAndSetsHost) {
  const RunResult r = network_->run(
      "curl -sS -H 'Proxy-Authorization: Basic c2VjcmV0' -H 'Connection: X-Private' "
      "-H 'X-Private: 1' -H 'X-Kept: 2' http://web.test/echo-headers");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Host: web.test\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("X-Kept: 2\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Proxy-Authorization"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("X-Private"), std::string::npos) << r.out;
}

TEST_F(NetworkTest, GitLsRemoteOverHttp) {
  const RunResult r = network_->run("git ls-remote http://git.test/repo.git");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, network_->head + "\tHEAD\n" + network_->head + "\trefs/heads/main\n");
}

TEST_F(NetworkTest, ProxyConnectRelaysExactBytes) {
  const RunResult r =
      network_->run("printf 'ping pong\\n' | " + sandbox_binary() + " proxy-connect web.test 7");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ping pong\n");
}

TEST_F(NetworkTest, SshRemotesGoThroughTheProxy) {
  fs::remove(network_->scratch.root / "ssh.log");
  // git runs $GIT_SSH_COMMAND, whose ProxyCommand is `pi-sandbox proxy-connect`.
  const RunResult r = network_->run("git ls-remote ssh://git@ssh.test/repo.git");
  EXPECT_NE(r.exit_code, 0);  // the test server only exchanges banners
  EXPECT_TRUE(read_file(network_->scratch.root / "ssh.log").starts_with("SSH-2.0-OpenSSH"))
      << r.err;
}

TEST_F(NetworkTest, ANameThatResolvesToLoopbackIsRefusedEvenWhenAllowed) {
  const RunResult r =
      network_->run("curl -sS -o /dev/null -w '%{http_connect}' --proxytunnel http://local.test/");
  EXPECT_EQ(r.out, "403");
  EXPECT_EQ(r.exit_code, 56) << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: network: refused local.test:80: local.test resolves to "),
            std::string::npos)
      << r.err;
}

TEST_F(NetworkTest, IpLiteralsAreRefused) {
  RunResult r = network_->run(
      "curl -sS -o /dev/null -w '%{http_connect}' --proxytunnel http://203.0.113.2/hello");
  EXPECT_EQ(r.out, "403");
  r = network_->run("curl -sS -o /dev/null -w '%{http_code}' http://203.0.113.2/hello");
  EXPECT_EQ(r.out, "403");
  // SOCKS5 with an IPv4 address (curl resolves the name itself): reply 0x02.
  r = network_->run("curl -sS -x socks5://127.0.0.1:1080 http://web.test/hello");
  EXPECT_EQ(r.exit_code, 97) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(NetworkTest, ADeniedDomainIsRefusedWithTheProxysAnswer) {
  const RunResult r = network_->run("curl -sS -i --proxytunnel http://blocked.test/hello");
  EXPECT_EQ(r.exit_code, 56);
  EXPECT_TRUE(r.out.starts_with("HTTP/1.1 403 Forbidden\r\n")) << r.out;
  EXPECT_NE(r.err.find("pi-sandbox: network: refused blocked.test:80: matches "
                       "network.deniedDomains entry blocked.test: the test's policy keeps it "
                       "out\n"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(network_->reviewed().empty());
}

TEST_F(NetworkTest, AnAllowingReviewerIsAskedOncePerDestinationAndCommand) {
  // Its allow holds for the rest of the command, as a person's allow-command does: one review
  // for the two connections of this command, another for the next command.
  RunResult r = network_->run(
      "curl -sS http://asked.test/a; curl -sS --proxytunnel "
      "http://asked.test/b",
      {"--reviewer", network_->reviewer("allow")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello + kHello);
  ASSERT_EQ(network_->reviewed().size(), 1u);
  r = network_->run("curl -sS http://asked.test/c", {"--reviewer", network_->reviewer("allow")});
  EXPECT_EQ(r.out, kHello);
  ASSERT_EQ(network_->reviewed().size(), 2u);
  for (const auto& line : network_->reviewed()) {
    EXPECT_NE(line.find(R"("destination":"asked.test:80")"), std::string::npos) << line;
    EXPECT_NE(line.find(R"("surface":"network")"), std::string::npos) << line;
    EXPECT_NE(line.find(R"("operation":"connect")"), std::string::npos) << line;
  }
  r = network_->run("curl -sS -o /dev/null -w '%{http_code}' http://asked.test/a",
                    {"--reviewer", network_->reviewer("deny")});
  EXPECT_EQ(r.out, "403");
  EXPECT_NE(r.err.find("pi-sandbox: network: refused asked.test:80: reviewer said deny"),
            std::string::npos)
      << r.err;
}

TEST_F(NetworkTest, WithoutAReviewerOrATerminalUndecidedIsRefused) {
  const RunResult r = network_->run("curl -sS -o /dev/null -w '%{http_code}' http://asked.test/a");
  EXPECT_EQ(r.out, "403");
}

// --- What will be refused is refused before anyone is asked (docs/approvals.md, "The order of
// a decision", step 3): the name is
// resolved and every address checked before the decision, for a direct connection.

TEST_F(NetworkTest, ANameThatDoesNotResolveOrResolvesToAPrivateAddressIsNotAskedAbout) {
  // Neither name is in allowedDomains: an allowing reviewer would be asked, and records it.
  const RunResult r = network_->run(
      "curl -s -o /dev/null -w '%{http_code} ' http://private.test/; "
      "curl -s -o /dev/null -w '%{http_connect}' --proxytunnel http://nowhere.test/",
      {"--reviewer", network_->reviewer("allow")});
  EXPECT_EQ(r.out, "403 502");
  EXPECT_TRUE(network_->reviewed().empty());
  const std::string private_line =
      "pi-sandbox: network: refused private.test:80: private.test resolves to 10.1.2.3, which is "
      "private\n";
  const std::string unresolved_line =
      "pi-sandbox: network: refused nowhere.test:80: could not resolve nowhere.test: ";
  EXPECT_TRUE(r.err.starts_with(private_line + unresolved_line)) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;
  EXPECT_TRUE(r.err.ends_with("\n")) << r.err;
  // No question, so no decision in the audit log either.
  const std::string audit =
      read_file(network_->scratch.home / ".pi/agent/logs/pi-sandbox-audit.jsonl");
  EXPECT_EQ(audit.find("private.test"), std::string::npos) << audit;
  EXPECT_EQ(audit.find("nowhere.test"), std::string::npos) << audit;
}

// --- An allowed destination that cannot be reached says why (docs/network.md, "Answers the
// command sees").

TEST_F(NetworkTest, AnUnreachableAllowedHostGetsOneLineNamingTheCause) {
  RunResult r =
      network_->run("curl -s -o /dev/null -w '%{http_connect}' --proxytunnel http://web.test:81/");
  EXPECT_EQ(r.out, "502");
  EXPECT_EQ(r.err, "pi-sandbox: network: web.test:81: connection refused (203.0.113.2:81)\n");
  r = network_->run("curl -s -o /dev/null -w '%{http_code}' http://unrouted.test/");
  EXPECT_EQ(r.out, "502");
  EXPECT_EQ(r.err,
            "pi-sandbox: network: unrouted.test:80: network is unreachable (198.51.100.7:80)\n");
  // Nobody answers for 203.0.113.9 on the test link: the neighbour lookup fails.
  r = network_->run("curl -s -x \"$ALL_PROXY\" http://gone.test/");
  EXPECT_EQ(r.exit_code, 97);  // SOCKS5 reply 0x04, host unreachable
  EXPECT_EQ(r.err, "pi-sandbox: network: gone.test:80: no route to host (203.0.113.9:80)\n");
}

// --- Happy Eyeballs (RFC 8305; docs/network.md, "Deciding a destination").

TEST_F(NetworkTest, ADeadIpv6PathDoesNotHoldUpTheIpv4One) {
  PI_SANDBOX_REQUIRE(fs::exists(network_->scratch.root / "ipv6.ready"),
                     "no IPv6 in the test network");
  const long before = network_->active_opens();
  ASSERT_GE(before, 0) << "cannot read the test network's TCP counters";
  // curl gives up after 20 s; one attempt after the other, the dead address alone would hold
  // each connection for the proxy's 30 s connect limit.
  const RunResult r = network_->run(
      "curl -sS --max-time 20 --proxytunnel http://dual.test/hello && "
      "curl -sS --max-time 20 -x \"$ALL_PROXY\" http://dual.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello + kHello);
  EXPECT_EQ(r.err, "");
  // Each connection tried the dead IPv6 address (first) and the IPv4 one: two SYNs each.
  EXPECT_EQ(network_->active_opens() - before, 4);
}

TEST_F(NetworkTest, EachRequestOnAKeepAliveConnectionIsDecided) {
  // One curl, one proxy connection, two requests: the second host is refused.
  const RunResult r =
      network_->run("curl -sS -w ' %{http_code}\\n' http://web.test/hello http://asked.test/hello",
                    {"--reviewer", network_->reviewer("deny")});
  EXPECT_EQ(r.out.substr(0, kHello.size() + 5), kHello + " 200\n") << r.out;
  EXPECT_NE(r.out.find(" 403\n"), std::string::npos) << r.out;
}

TEST_F(NetworkTest, TheTerminalMayAllowADestinationForTheRestOfTheCommand) {
  const std::string command =
      "for i in 1 2 3; do curl -sS -o /dev/null -w '%{http_code} ' http://asked.test/; done";
  const std::vector<std::string> argv = network_->test_network.inside(
      {sandbox_binary(), "run", "--cwd", network_->scratch.ws.string(), "--config",
       (network_->scratch.root / "config.json").string(), "-c", command});
  const PtyRun run =
      run_on_terminal(argv, network_->scratch.env(), {{"Choice [1-4, Enter = Deny]: ", "3\n"}});
  EXPECT_EQ(run.exit_code, 0) << run.screen;
  EXPECT_NE(run.screen.find("Sandbox approval required: connect asked.test:80"), std::string::npos)
      << run.screen;
  EXPECT_NE(run.screen.find("3) Allow asked.test:80 for the rest of this command"),
            std::string::npos)
      << run.screen;
  // One question for three connections.
  EXPECT_EQ(
      run.screen.find("Sandbox approval required", run.screen.find("Choice [1-4, Enter = Deny]")),
      std::string::npos)
      << run.screen;
  EXPECT_NE(run.screen.find("200 200 200 "), std::string::npos) << run.screen;
  const std::string audit =
      read_file(network_->scratch.home / ".pi/agent/logs/pi-sandbox-audit.jsonl");
  EXPECT_NE(audit.find(R"("event":"grant_issued","request_hash")"), std::string::npos) << audit;
  EXPECT_NE(
      audit.find(
          R"("destination":"asked.test:80","source":"broker","reason":"valid for the rest of this command")"),
      std::string::npos)
      << audit;
}

const char* const kDownloads = R"PY(
import hashlib, socket, sys
expected = bytes((i * 7 + 3) % 251 for i in range(200_000))
bad = 0
for i in range(1000):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT web.test:80 HTTP/1.1\r\nHost: web.test:80\r\n\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)
    s.sendall(b"GET /close HTTP/1.1\r\nHost: web.test\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    if not data.endswith(expected):
        bad += 1
print("truncated", bad)
)PY";

TEST_F(NetworkTest, AThousandDownloadsClosedRightAfterTheResponseLoseNoByte) {
  write_file(network_->scratch.ws / "downloads.py", kDownloads);
  const RunResult r = network_->run("python3 downloads.py");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "truncated 0\n");
}

const char* const kConcurrent = R"PY(
import asyncio, resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
async def open_tunnel():
    r, w = await asyncio.open_connection("127.0.0.1", 3128)
    w.write(b"CONNECT web.test:7 HTTP/1.1\r\nHost: web.test:7\r\n\r\n")
    head = await r.readuntil(b"\r\n\r\n")
    return r, w, head.startswith(b"HTTP/1.1 200")
async def use(i, tunnel):
    r, w, ok = tunnel
    if not ok:
        return False
    line = b"tunnel %d\n" % i
    w.write(line)
    got = await r.readexactly(len(line))
    w.close()
    return got == line
async def main():
    # All 1000 tunnels are open at once before any carries a byte.
    tunnels = await asyncio.gather(*(open_tunnel() for _ in range(1000)))
    print("ok", sum(await asyncio.gather(*(use(i, t) for i, t in enumerate(tunnels)))))
asyncio.run(main())
)PY";

TEST_F(NetworkTest, AThousandConcurrentTunnels) {
  write_file(network_->scratch.ws / "tunnels.py", kConcurrent);
  const RunResult r = network_->run("python3 tunnels.py");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ok 1000\n");
}

// --- Clients that ignore the proxy (docs/network.md, "Clients that ignore the proxy").

const std::string kDirectHint =
    "pi-sandbox: the command tried to connect directly, not through the proxy; some clients "
    "ignore HTTP_PROXY: see docs/network.md, \"Clients that ignore the proxy\"\n";

TEST_F(NetworkTest, ADirectConnectionGetsOneHintAfterTheCommand) {
  // Two attempts, one line; curl -s prints nothing of its own.
  const RunResult r = network_->run(
      "curl -s --noproxy '*' http://web.test/hello; curl -s --noproxy '*' http://web.test/; "
      "echo $?");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "7\n");
  EXPECT_EQ(r.err, kDirectHint);
}

TEST_F(NetworkTest, APythonSocketToAnAddressGetsTheHint) {
  const RunResult r = network_->run(
      "python3 -c \"import socket\n"
      "try: socket.create_connection(('203.0.113.2', 80), timeout=5)\n"
      "except OSError as e: print(e.errno)\"");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "101\n");  // ENETUNREACH
  EXPECT_EQ(r.err, kDirectHint);
}

TEST_F(NetworkTest, AnIpv6AddressGetsTheHintALocalResolverDoesNot) {
  const RunResult v6 = network_->run(
      "python3 -c \"import socket\n"
      "s = socket.socket(socket.AF_INET6)\n"
      "try: s.connect(('2001:db8::2', 80))\n"
      "except OSError as e: print(e.errno)\"");
  EXPECT_EQ(v6.exit_code, 0) << v6.err;
  EXPECT_EQ(v6.out, "101\n");
  EXPECT_EQ(v6.err, kDirectHint);
  // A name lookup through a stub resolver on the loopback (systemd-resolved's 127.0.0.53),
  // which does not exist inside the sandbox: a lookup, no connection.
  const RunResult stub = network_->run(
      "python3 -c \"import socket\n"
      "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
      "s.sendto(b'x', ('127.0.0.53', 53))\"");
  EXPECT_EQ(stub.exit_code, 0) << stub.err;
  EXPECT_EQ(stub.err, "");
}

TEST_F(NetworkTest, ANameLookupOfTheHostsNameServerIsNoDirectConnection) {
  // python's http.server names itself with getfqdn(), which looks up the sandbox's host name
  // through the host's name servers (this machine's resolv.conf): no hint after it. A direct
  // connection in the same command still gets one.
  const RunResult lookup = network_->run(
      "python3 -c \"import http.server as h\n"
      "s = h.HTTPServer(('', 0), h.SimpleHTTPRequestHandler)\n"
      "print(s.server_name)\"");
  EXPECT_EQ(lookup.exit_code, 0) << lookup.err;
  EXPECT_EQ(lookup.out, "pi-sandbox\n");
  EXPECT_EQ(lookup.err, "");
  const RunResult both = network_->run(
      "python3 -c \"import socket\n"
      "socket.getfqdn()\n"
      "try: socket.create_connection(('203.0.113.2', 80), timeout=5)\n"
      "except OSError as e: print(e.errno)\"");
  EXPECT_EQ(both.out, "101\n");
  EXPECT_EQ(both.err, kDirectHint);
}

TEST_F(NetworkTest, ClientsThatUseTheProxyGetNoHint) {
  const RunResult r = network_->run(
      "curl -sS http://web.test/hello && curl -sS --proxytunnel http://web.test/hello && "
      "curl -sS -x \"$ALL_PROXY\" http://web.test/hello && "
      "python3 -c \"import urllib.request; "
      "print(urllib.request.urlopen('http://web.test/hello').read().decode(), end='')\" && "
      "curl -s http://127.0.0.1:9/ ; echo $?");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, kHello + kHello + kHello + kHello + "7\n");
  EXPECT_EQ(r.err, "");  // a refused connection to the command's own loopback is no hint either
}

// --- Tools that ignore HTTP_PROXY get their own knob (docs/network.md, "Environment of the
// command").

/// A stand-in JVM: reads nothing but JAVA_TOOL_OPTIONS' -Dhttp.proxyHost/-Dhttp.proxyPort (the
/// last of each, as the JVM does) and fetches its argument through that proxy, or directly.
const char* const kJvmStandIn = R"PY(import os, sys, urllib.request
props = {}
for word in os.environ.get("JAVA_TOOL_OPTIONS", "").split():
    if word.startswith("-D") and "=" in word:
        key, value = word[2:].split("=", 1)
        props[key] = value
proxies = {}
if "http.proxyHost" in props:
    proxies["http"] = "http://%s:%s" % (props["http.proxyHost"], props.get("http.proxyPort", "80"))
opener = urllib.request.build_opener(urllib.request.ProxyHandler(proxies))
print(opener.open(sys.argv[1], timeout=10).read().decode(), end="")
)PY";

TEST_F(NetworkTest, AStandInJvmReadingOnlyJavaToolOptionsGoesThroughTheProxy) {
  write_file(network_->scratch.ws / "jvm.py", kJvmStandIn);
  // env -i: the stand-in sees no other proxy variable at all.
  const RunResult r = network_->run(
      "env -i PATH=/usr/bin:/bin JAVA_TOOL_OPTIONS=\"$JAVA_TOOL_OPTIONS\" python3 jvm.py "
      "http://web.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
  EXPECT_EQ(r.err, "");
  const RunResult without =
      network_->run("env -i PATH=/usr/bin:/bin python3 jvm.py http://web.test/hello");
  EXPECT_EQ(without.exit_code, 1);
  EXPECT_NE(without.err.find("Network is unreachable"), std::string::npos) << without.err;
  EXPECT_TRUE(without.err.ends_with(kDirectHint)) << without.err;
}

const char* const kFetchJava = R"JAVA(import java.io.InputStream;
import java.net.URL;

public class Fetch {
  public static void main(String[] args) throws Exception {
    try (InputStream in = new URL(args[0]).openStream()) {
      System.out.print(new String(in.readAllBytes(), "UTF-8"));
    }
  }
}
)JAVA";

TEST_F(NetworkTest, ARealJvmGoesThroughTheProxy) {
  // Not a kernel feature: without a JDK the stand-in above holds the guarantee.
  if (::access("/usr/bin/java", X_OK) != 0) GTEST_SKIP() << "java is not installed";
  write_file(network_->scratch.ws / "Fetch.java", kFetchJava);
  const RunResult r = network_->run("java Fetch.java http://web.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
  // The JVM says which options it picked up; nothing else.
  EXPECT_EQ(r.err,
            "Picked up JAVA_TOOL_OPTIONS: -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "
            "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
            "-Dhttp.nonProxyHosts=localhost|127.*|[::1]\n");
}

// --- A parent (company) proxy (docs/network.md, "A parent proxy"): the
// proxy decides every destination as always, then reaches it through the parent in
// pi-sandbox's own environment with CONNECT. The parent is the Python one in kServers.

/// The weaker sandbox where user namespaces cannot be made (docs/security.md, "Where namespaces
/// cannot be made"): the proxy on the host's loopback, every inet connect() brokered.
class WeakModeNetworkTest : public NetworkTest {
 protected:
  void SetUp() override {
    NetworkTest::SetUp();
    PI_SANDBOX_REQUIRE(::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U) >= 1,
                       "Landlock is unavailable: no weaker sandbox");
    network_->wrapper = {deny_userns_wrapper()};
  }
  void TearDown() override { network_->wrapper.clear(); }
};

TEST_F(WeakModeNetworkTest, CurlThroughTheProxyOnTheHostsLoopback) {
  const RunResult r = network_->run(
      "curl -sS http://web.test/hello && curl -sS --proxytunnel "
      "http://web.test/hello && curl -sS -x \"$ALL_PROXY\" "
      "http://web.test/hello");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello + kHello + kHello);
  EXPECT_NE(r.err.find("pi-sandbox: weaker sandbox"), std::string::npos) << r.err;
}

TEST_F(WeakModeNetworkTest, ADeniedDomainIsRefusedWithTheProxysAnswer) {
  const RunResult r = network_->run("curl -sS -i --proxytunnel http://blocked.test/hello");
  EXPECT_EQ(r.exit_code, 56);
  EXPECT_TRUE(r.out.starts_with("HTTP/1.1 403 Forbidden\r\n")) << r.out;
  EXPECT_NE(r.err.find("pi-sandbox: network: refused blocked.test:80: matches "
                       "network.deniedDomains entry blocked.test"),
            std::string::npos)
      << r.err;
}

TEST_F(WeakModeNetworkTest, WithoutTheProxyThereIsNoNetwork) {
  const RunResult r = network_->run(
      "curl -sS --noproxy '*' http://web.test/hello; echo \"curl $?\"; python3 -c '"
      "import socket\ntry: socket.create_connection((\"203.0.113.2\", 80))\n"
      "except OSError as e: print(e.errno)'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "curl 7\n13\n");  // couldn't connect; EACCES from the broker
}

TEST_F(WeakModeNetworkTest, GitOverHttpAndSshGoesThroughTheProxy) {
  const RunResult r = network_->run("git ls-remote http://git.test/repo.git");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, network_->head + "\tHEAD\n" + network_->head + "\trefs/heads/main\n");
  fs::remove(network_->scratch.root / "ssh.log");
  // git runs $GIT_SSH_COMMAND, whose ProxyCommand is `pi-sandbox proxy-connect`, which finds
  // the proxy and its credential in ALL_PROXY.
  const RunResult ssh = network_->run("git ls-remote ssh://git@ssh.test/repo.git");
  EXPECT_NE(ssh.exit_code, 0);  // the test server only exchanges banners
  EXPECT_TRUE(read_file(network_->scratch.root / "ssh.log").starts_with("SSH-2.0-OpenSSH"))
      << ssh.err;
}

TEST_F(WeakModeNetworkTest, TheProxyAsksForTheCommandsCredential) {
  const RunResult r = network_->run(
      "curl -sS -o /dev/null -w '%{http_code}\\n' -x \"http://127.0.0.1:${HTTP_PROXY##*:}\" "
      "http://web.test/hello");
  EXPECT_EQ(r.out, "407\n") << r.err;
}

class ParentProxyTest : public NetworkTest {
 protected:
  void SetUp() override {
    NetworkTest::SetUp();
    fs::remove(network_->scratch.root / "parent.log");
  }
  /// What the parent received, one line per request.
  static std::string parent_log() { return read_file(network_->scratch.root / "parent.log"); }
};

const std::string kOpenParent = "http://parent.test:3129";

TEST_F(ParentProxyTest, ConnectSocksAndPlainHttpAllGoThroughTheParent) {
  const RunResult r = network_->run(
      "curl -sS --proxytunnel http://web.test/a && curl -sS http://web.test/b && "
      "curl -sS -x \"$ALL_PROXY\" http://web.test/c",
      {}, {{"HTTPS_PROXY", kOpenParent}, {"HTTP_PROXY", kOpenParent}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello + kHello + kHello);
  EXPECT_EQ(r.err.find("pi-sandbox: network:"), std::string::npos) << r.err;
  EXPECT_EQ(parent_log(),
            "3129 CONNECT web.test:80 auth=-\n"
            "3129 CONNECT web.test:80 auth=-\n"
            "3129 CONNECT web.test:80 auth=-\n");
}

TEST_F(ParentProxyTest, ServerFirstProtocolsKeepTheirFirstBytes) {
  // The SSH banner may arrive with the parent's 200: it must reach the client.
  const RunResult r = network_->run(
      "printf 'x\\n' | " + sandbox_binary() + " proxy-connect ssh.test 22 | head -c 21", {},
      {{"HTTPS_PROXY", kOpenParent}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "SSH-2.0-PiSandboxTest");
  EXPECT_EQ(parent_log(), "3129 CONNECT ssh.test:22 auth=-\n");
}

TEST_F(ParentProxyTest, TheParentResolvesNamesThisHostCannot) {
  // behind.test is in no /etc/hosts: only the parent knows it, as behind a company proxy.
  RunResult r =
      network_->run("curl -sS http://behind.test/hello", {}, {{"HTTP_PROXY", kOpenParent}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
  EXPECT_EQ(parent_log(), "3129 CONNECT behind.test:80 auth=-\n");
  // Without the parent the name does not resolve.
  r = network_->run("curl -sS -o /dev/null -w '%{http_code}' http://behind.test/hello");
  EXPECT_EQ(r.out, "502");
}

TEST_F(ParentProxyTest, CredentialsFromTheUrlAreSentAsBasic) {
  const RunResult r =
      network_->run("curl -sS --proxytunnel http://web.test/hello", {},
                    {{"HTTPS_PROXY", "http://alice:p%40ss%3Aw%20rd@parent.test:3130"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello);
  EXPECT_EQ(parent_log(), "3130 CONNECT web.test:80 auth=Basic YWxpY2U6cEBzczp3IHJk\n");
}

TEST_F(ParentProxyTest, A407WithoutOrWithWrongCredentialsIsAFailureThatSaysSo) {
  RunResult r = network_->run(
      "curl -sS -o /dev/null -w '%{http_connect}' --proxytunnel http://web.test/hello", {},
      {{"HTTPS_PROXY", "http://parent.test:3130"}});
  EXPECT_EQ(r.out, "502");
  EXPECT_EQ(r.exit_code, 56);
  EXPECT_NE(r.err.find("pi-sandbox: network: web.test:80: the parent proxy "
                       "http://parent.test:3130 (HTTPS_PROXY) answered CONNECT with 407 Proxy "
                       "Authentication Required (no credentials were given)\n"),
            std::string::npos)
      << r.err;
  r = network_->run("curl -sS -o /dev/null -w '%{http_connect}' --proxytunnel http://web.test/", {},
                    {{"HTTPS_PROXY", "http://alice:wrong@parent.test:3130"}});
  EXPECT_EQ(r.out, "502");
  EXPECT_NE(r.err.find("answered CONNECT with 407 Proxy Authentication Required (it refused "
                       "the credentials)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("wrong"), std::string::npos) << r.err;  // never the password
}

TEST_F(ParentProxyTest, AParentThatRefusesOrIsDownIsAFailureThatSaysSo) {
  RunResult r = network_->run("curl -sS -i http://web.test/hello", {},
                              {{"HTTP_PROXY", "http://parent.test:3131"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("HTTP/1.1 502 Bad Gateway\r\n")) << r.out;
  EXPECT_TRUE(
      r.out.ends_with("the parent proxy http://parent.test:3131 (HTTP_PROXY) answered "
                      "CONNECT with 403 Forbidden\n"))
      << r.out;
  EXPECT_NE(
      r.err.find("pi-sandbox: network: web.test:80: the parent proxy "
                 "http://parent.test:3131 (HTTP_PROXY) answered CONNECT with 403 Forbidden\n"),
      std::string::npos)
      << r.err;
  // SOCKS5: general failure (0x01); curl says so.
  r = network_->run("curl -sS -x \"$ALL_PROXY\" http://web.test/hello", {},
                    {{"HTTPS_PROXY", "http://203.0.113.2:3199"}});
  EXPECT_EQ(r.exit_code, 97) << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: network: web.test:80: could not connect to the parent "
                       "proxy http://203.0.113.2:3199 (HTTPS_PROXY): connection refused "
                       "(203.0.113.2:3199)\n"),
            std::string::npos)
      << r.err;
  // An unusable URL: these connections fail, never directly.
  r = network_->run("curl -sS -o /dev/null -w '%{http_connect}' --proxytunnel http://web.test/", {},
                    {{"ALL_PROXY", "socks5://parent.test:1080"}});
  EXPECT_EQ(r.out, "502");
  EXPECT_NE(r.err.find("pi-sandbox: network: web.test:80: the parent proxy in ALL_PROXY "
                       "cannot be used: its URL uses the scheme socks5; only http:// parent "
                       "proxies are supported\n"),
            std::string::npos)
      << r.err;
}

TEST_F(ParentProxyTest, NoProxyDestinationsGoDirectlyWithTheAddressCheck) {
  const std::map<std::string, std::string> env = {{"HTTPS_PROXY", kOpenParent},
                                                  {"HTTP_PROXY", kOpenParent},
                                                  {"NO_PROXY", ".web.test,local.test"}};
  RunResult r = network_->run(
      "curl -sS --proxytunnel http://web.test/a && curl -sS http://git.test/b", {}, env);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kHello + kHello);
  EXPECT_EQ(parent_log(), "3129 CONNECT git.test:80 auth=-\n");  // web.test went directly
  r = network_->run("curl -sS -o /dev/null -w '%{http_connect}' --proxytunnel http://local.test/",
                    {}, env);
  EXPECT_EQ(r.out, "403");
  EXPECT_NE(r.err.find("pi-sandbox: network: refused local.test:80: local.test resolves to "
                       "127.0.0.1, which is loopback"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(parent_log(), "3129 CONNECT git.test:80 auth=-\n");
}

TEST_F(ParentProxyTest, RefusalsAreMadeBeforeTheParentIsAsked) {
  const std::map<std::string, std::string> env = {{"HTTPS_PROXY", kOpenParent},
                                                  {"HTTP_PROXY", kOpenParent}};
  RunResult r = network_->run(
      "curl -sS -o /dev/null -w '%{http_connect} ' --proxytunnel http://203.0.113.2/; "
      "curl -sS -o /dev/null -w '%{http_code} ' http://blocked.test/; "
      "curl -sS -o /dev/null -w '%{http_code}' http://asked.test/",
      {}, env);
  EXPECT_EQ(r.out, "403 403 403");
  EXPECT_NE(r.err.find("pi-sandbox: network: refused 203.0.113.2:80: the host is an IP address "
                       "literal"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(parent_log(), "");
  // An approved destination goes through the parent.
  r = network_->run("curl -sS http://asked.test/", {"--reviewer", network_->reviewer("allow")},
                    env);
  EXPECT_EQ(r.out, kHello);
  EXPECT_EQ(parent_log(), "3129 CONNECT asked.test:80 auth=-\n");
}

TEST_F(ParentProxyTest, TheParentAndItsCredentialsAreNeverVisibleInside) {
  const RunResult r = network_->run("env", {},
                                    {{"HTTPS_PROXY", "http://alice:s3cret@parent.test:3130"},
                                     {"http_proxy", "http://alice:s3cret@parent.test:3130"},
                                     {"ALL_PROXY", "http://alice:s3cret@parent.test:3130"},
                                     {"NO_PROXY", "corp.example"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("s3cret"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("parent.test"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nHTTPS_PROXY=http://127.0.0.1:3128\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nNO_PROXY=localhost,127.0.0.1,::1\n"), std::string::npos) << r.out;
}

TEST_F(ParentProxyTest, PolicyShowsTheChainWithoutTheCredentials) {
  const RunResult r =
      run_process({sandbox_binary(), "policy", "--cwd", network_->scratch.ws.string()},
                  {{"HOME", network_->scratch.home.string()},
                   {"HTTPS_PROXY", "http://alice:s3cret@parent.test:3130"},
                   {"HTTP_PROXY", ""},
                   {"http_proxy", ""},
                   {"https_proxy", ""},
                   {"all_proxy", ""},
                   {"ALL_PROXY", ""},
                   {"no_proxy", ""},
                   {"NO_PROXY", "corp.example,127.0.0.1"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("network: the command -> pi-sandbox's proxy (127.0.0.1:3128 HTTP, "
                       "127.0.0.1:1080 SOCKS5) -> the parent proxy, unless NO_PROXY matches -> "
                       "the destination\n"
                       "  parent proxy for CONNECT and SOCKS5: http://parent.test:3130 "
                       "(credentials: yes, from HTTPS_PROXY)\n"
                       "  parent proxy for http:// requests: none (directly)\n"
                       "  directly (NO_PROXY): corp.example; ignored (addresses and ports never "
                       "match a host name): 127.0.0.1\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("s3cret"), std::string::npos);
}

}  // namespace
}  // namespace pisandbox::testing
