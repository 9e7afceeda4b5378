// The macOS runner (sandbox/macos/runner.hpp) run whole on Linux, with a STAND-IN for
// /usr/bin/sandbox-exec, because Seatbelt cannot run on Linux.
//
// The stand-in is a shell script the test writes (RunnerOverrides::sandbox_exec): it checks that
// its arguments are `-p <profile> -- <argv...>`, writes the profile to a file the test reads, and
// execs the command, unconfined. Everything else is real: the private directories under the
// caller's TMPDIR and their removal, the proxy's listeners on 127.0.0.1 with the kernel's ports,
// the credential, the ProxyStarter and a real proxy::Server started from it, the profile as
// plan_seatbelt() renders it for the real directories and ports, the home layer's links, the
// environment, posix_spawn in a process group, stdin, the output pipes, the timeout, the cancel
// descriptor, the exit statuses and the kill of the group.
//
// What this does NOT prove: that Seatbelt accepts the profile or enforces it (nothing here is
// confined: a write outside the workspace, a read of the hidden home or a connection to any port
// would succeed); that Apple's sandbox-exec execs the command as the stand-in does (so that the
// command's wait status is the one seen, and it stays the group's leader); the Apple-only spawn
// flags (POSIX_SPAWN_CLOEXEC_DEFAULT, posix_spawn_file_actions_addinherit_np), which glibc does
// not have (here addclosefrom_np closes the other descriptors); and the paths macOS resolves
// (`/var` to `/private/var`). docs/macos.md, "The manual check list", is what a Mac must run.
//
// Test names: `origin.test` resolves to 127.0.0.1 through a private /etc/hosts in a mount
// namespace of this test process, as in proxy_server_test.cpp (the proxy refuses IP literals and
// single labels); the proxy's address filter is the one test seam, accepting 127.0.0.1.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asio/ip/address.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/unique_fd.hpp"
#include "policy/environment.hpp"
#include "policy/protected_scan.hpp"
#include "policy/proxy_environment.hpp"
#include "proxy/server.hpp"
#include "require.hpp"
#include "sandbox/macos/launch_plan.hpp"
#include "sandbox/macos/runner.hpp"
#include "sandbox/macos/seatbelt.hpp"
#include "test_names.hpp"

namespace pisandbox::sandbox::macos {
namespace {

namespace fs = std::filesystem;
using core::UniqueFd;

// ---- test names (before main(), while the process has one thread) -----------------------------

bool write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const std::string kNoTestNames =
    testing::use_private_hosts("127.0.0.1 localhost\n127.0.0.1 origin.test\n");

// ---- sockets -----------------------------------------------------------------------------------

std::uint16_t local_port(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  return ntohs(address.sin_port);
}

UniqueFd connect_loopback(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const timeval timeout{10, 0};  // a hang fails the test instead of blocking it
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fd.reset();
  return fd;
}

/// Sends `request` to 127.0.0.1:`port` and reads until the peer closes (or 10 s pass).
std::string send_and_read(std::uint16_t port, const std::string& request) {
  UniqueFd fd = connect_loopback(port);
  if (!fd) return "(connect failed)";
  (void)!::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd.get(), buffer, sizeof buffer, 0)) > 0)
    out.append(buffer, static_cast<std::size_t>(n));
  return out;
}

/// A tiny HTTP origin on 127.0.0.1: each connection gets `origin` and is closed.
class Origin {
 public:
  Origin() : listener_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listener_.get(), 16) != 0)
      ADD_FAILURE() << "the origin cannot listen";
    port_ = local_port(listener_.get());
    thread_ = std::thread([this] {
      for (;;) {
        UniqueFd fd(::accept(listener_.get(), nullptr, nullptr));
        if (!fd) return;
        std::string head;
        char c;
        while (!head.ends_with("\r\n\r\n") && ::recv(fd.get(), &c, 1, 0) == 1) head.push_back(c);
        const std::string answer =
            "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\norigin";
        (void)!::send(fd.get(), answer.data(), answer.size(), MSG_NOSIGNAL);
      }
    });
  }
  ~Origin() {
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
  }
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  UniqueFd listener_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// ---- processes ---------------------------------------------------------------------------------

/// Whether `pid` is gone (no such process, or a zombie nobody has reaped yet), waiting up to
/// 10 s for SIGKILL to be delivered.
bool gone(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() &&
        (stat[close + 2] == 'Z' || stat[close + 2] == 'X'))
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

/// A pid a command wrote to `path`, waiting up to 10 s for it to appear; -1 if it did not.
pid_t wait_for_pid(const fs::path& path) {
  for (int i = 0; i < 1000; ++i) {
    const std::string text = read_text(path);
    if (text.ends_with("\n")) return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// ---- outcomes ----------------------------------------------------------------------------------

/// The outcome in words, for exact comparisons with a readable failure.
std::string describe(const Outcome& outcome) {
  if (outcome) {
    if (const auto* exited = std::get_if<Exited>(&*outcome))
      return "exited " + std::to_string(exited->code);
    return "signaled " + std::to_string(std::get<Signaled>(*outcome).signal);
  }
  switch (outcome.error().kind) {
    case RunFailureKind::TimedOut:
      return "timed out";
    case RunFailureKind::Aborted:
      return "aborted";
    case RunFailureKind::LaunchFailed:
      return "launch failed: " + outcome.error().message;
    case RunFailureKind::GuardFailed:
      return "guard failed: " + outcome.error().message;
    case RunFailureKind::Stale:
      return "stale: " + outcome.error().message;
  }
  return "?";
}

/// pi-sandbox(1)'s exit status for `outcome` ("EXIT STATUS", as cli/run_command.cpp maps it):
/// the command's code, 128+N for signal N (exit_status()), 124 after the timeout; -1 otherwise.
int pi_sandbox_status(const Outcome& outcome) {
  if (outcome) {
    if (const auto* exited = std::get_if<Exited>(&*outcome))
      return exit_status({true, exited->code});
    return exit_status({false, std::get<Signaled>(*outcome).signal});
  }
  return outcome.error().kind == RunFailureKind::TimedOut ? 124 : -1;
}

class CollectingSink final : public OutputSink {
 public:
  void write(Stream stream, std::string_view bytes) override {
    (stream == Stream::Stdout ? out : err).append(bytes);
  }
  std::string out, err;
};

std::map<std::string, std::string> parse_env(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (const auto eq = line.find('='); eq != std::string::npos)
      out[line.substr(0, eq)] = line.substr(eq + 1);
  return out;
}

bool is_lower_hex(const std::string& text) {
  return text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// ---- the fixture -------------------------------------------------------------------------------

/// What the ProxyStarter was given, read as it was called.
struct Received {
  std::size_t http = 0, socks = 0;
  std::uint16_t http_port = 0, socks_port = 0;
  std::string username, password;
  bool http_accepts = false, socks_accepts = false;
};

/// Accepts a connection the test makes to `listener` (true when both ends met).
bool accepts(int listener) {
  UniqueFd client = connect_loopback(local_port(listener));
  if (!client) return false;
  pollfd pfd{listener, POLLIN, 0};
  if (::poll(&pfd, 1, 10000) != 1) return false;
  UniqueFd accepted(::accept(listener, nullptr, nullptr));
  return accepted.valid();
}

class MacosRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/pi-sandbox-macos-runner-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = fs::canonical(pattern);
    for (const char* dir : {"ws", "home", "tmp", "bin"}) fs::create_directory(root_ / dir);
    ASSERT_TRUE(write_text(root_ / "home/.gitconfig", "[user]\n\tname = test\n"));
    // The caller's TMPDIR: the private directories are made in it, and nothing stays there.
    saved_tmpdir_ = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "";
    ::setenv("TMPDIR", (root_ / "tmp").c_str(), 1);
    // The stand-in for /usr/bin/sandbox-exec (see the header comment).
    overrides_.sandbox_exec = (root_ / "bin/sandbox-exec").string();
    ASSERT_TRUE(write_text(
        overrides_.sandbox_exec,
        "#!/bin/sh\n"
        "# A stand-in for sandbox-exec (unit_macos_runner): checks -p <profile> -- <argv...>,\n"
        "# keeps the profile for the test, then runs the command unconfined.\n"
        "if [ \"$#\" -lt 4 ] || [ \"$1\" != -p ] || [ \"$3\" != -- ]; then\n"
        "  echo \"stand-in sandbox-exec: unexpected arguments: $*\" >&2\n"
        "  exit 126\n"
        "fi\n"
        "printf '%s' \"$2\" > '" +
            (root_ / "profile").string() +
            "'\n"
            "shift 3\n"
            "exec \"$@\"\n"));
    ::chmod(overrides_.sandbox_exec.c_str(), 0755);
    policy::PolicyInputs inputs{root_ / "ws", root_ / "home", root_ / "bin/pi-sandbox", {}, {}};
    policy_ = policy::default_policy(inputs);
    // The environment as the session builds it for Linux (policy::command_environment): the
    // runner replaces its proxy variables and private directories.
    const std::vector<std::string> caller = {"PATH=/usr/bin:/bin",
                                             "HOME=" + (root_ / "home").string(), "KEEP=me",
                                             "JAVA_TOOL_OPTIONS=-Xmx1g"};
    env_ = policy::command_environment(caller, {}, root_ / "bin/pi-sandbox").env;
  }

  void TearDown() override {
    if (saved_tmpdir_.empty())
      ::unsetenv("TMPDIR");
    else
      ::setenv("TMPDIR", saved_tmpdir_.c_str(), 1);
    std::error_code ignored;
    fs::remove_all(root_, ignored);
  }

  /// Runs `script` with bash -c in the workspace; output into `sink` unless options.output is
  /// set already.
  Outcome run(const std::string& script, RunOptions options = {}) {
    if (options.output == nullptr) options.output = &sink_;
    return run_sandboxed(
        policy_, Command{{"/bin/bash", "-c", script}, root_ / "ws", env_}, options,
        [this](const std::string& line) { warnings_.push_back(line); }, overrides_);
  }

  /// A ProxyStarter that records what it receives (checking that both listeners accept) and
  /// starts nothing.
  ProxyStarter recording_starter() {
    return [this](ProxyListeners listeners) -> std::shared_ptr<void> {
      received_.http = listeners.http.size();
      received_.socks = listeners.socks.size();
      if (received_.http != 1 || received_.socks != 1) return nullptr;
      received_.http_port = local_port(listeners.http[0].get());
      received_.socks_port = local_port(listeners.socks[0].get());
      received_.username = listeners.username;
      received_.password = listeners.password;
      received_.http_accepts = accepts(listeners.http[0].get());
      received_.socks_accepts = accepts(listeners.socks[0].get());
      return std::make_shared<ProxyListeners>(std::move(listeners));
    };
  }

  /// Whether the caller's TMPDIR is as empty as before the run.
  [[nodiscard]] bool tmpdir_empty() const { return fs::is_empty(root_ / "tmp"); }

  fs::path root_;
  std::string saved_tmpdir_;
  RunnerOverrides overrides_;
  policy::SandboxPolicy policy_;
  std::vector<std::string> env_;
  CollectingSink sink_;
  std::vector<std::string> warnings_;
  Received received_;
};

// ---- exit statuses -----------------------------------------------------------------------------

TEST_F(MacosRunner, TheCommandsExitStatusIsItsOwn) {
  const Outcome outcome = run("exit 7");
  EXPECT_EQ(describe(outcome), "exited 7");
  EXPECT_EQ(pi_sandbox_status(outcome), 7);
  EXPECT_EQ(describe(run("true")), "exited 0");
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(MacosRunner, ASignalIs128PlusItsNumber) {
  const Outcome outcome = run("kill -TERM $$");
  EXPECT_EQ(describe(outcome), "signaled 15");
  EXPECT_EQ(pi_sandbox_status(outcome), 143);
}

TEST_F(MacosRunner, TheTimeoutKillsTheWholeGroupWith124) {
  RunOptions options;
  options.timeout = std::chrono::milliseconds(3000);
  const fs::path pid_file = root_ / "background.pid";
  const Outcome outcome =
      run("sleep 100 & echo $! > '" + pid_file.string() + "'; sleep 100", options);
  EXPECT_EQ(describe(outcome), "timed out");
  EXPECT_EQ(pi_sandbox_status(outcome), 124);
  const pid_t background = wait_for_pid(pid_file);
  ASSERT_GT(background, 0);
  EXPECT_TRUE(gone(background)) << "the background sleep " << background << " still runs";
  EXPECT_TRUE(tmpdir_empty());
}

TEST_F(MacosRunner, BackgroundChildrenDieWhenTheCommandExits) {
  const fs::path pid_file = root_ / "background.pid";
  EXPECT_EQ(describe(run("sleep 100 & echo $! > '" + pid_file.string() + "'; exit 3")), "exited 3");
  const pid_t background = wait_for_pid(pid_file);
  ASSERT_GT(background, 0);
  EXPECT_TRUE(gone(background)) << "the background sleep " << background << " still runs";
}

// The cancel descriptor is polled, never read: `run` reads its signalfd afterwards to learn
// which signal it was (cli/run_command.cpp).
TEST_F(MacosRunner, AReadableCancelDescriptorAbortsAndIsNotRead) {
  int cancel[2];
  ASSERT_EQ(::pipe2(cancel, O_CLOEXEC), 0);
  UniqueFd cancel_read(cancel[0]), cancel_write(cancel[1]);
  const fs::path pid_file = root_ / "command.pid";
  std::thread canceller([&] {
    if (wait_for_pid(pid_file) > 0) (void)!::write(cancel_write.get(), "x", 1);
  });
  RunOptions options;
  options.cancel_fd = cancel_read.get();
  const Outcome outcome = run("echo $$ > '" + pid_file.string() + "'; sleep 100", options);
  canceller.join();
  EXPECT_EQ(describe(outcome), "aborted");
  EXPECT_TRUE(gone(wait_for_pid(pid_file)));
  pollfd pfd{cancel_read.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 0), 1) << "the cancel byte was read";
}

TEST_F(MacosRunner, AMissingSandboxExecIsALaunchFailureAndLeavesNothing) {
  overrides_.sandbox_exec = (root_ / "bin/no-such-sandbox-exec").string();
  const Outcome outcome = run("true");
  EXPECT_EQ(describe(outcome), "launch failed: posix_spawn(" + overrides_.sandbox_exec + ") in " +
                                   (root_ / "ws").string() +
                                   ": ENOENT (No such file or directory)");
  EXPECT_TRUE(tmpdir_empty());
}

// ---- stdio -------------------------------------------------------------------------------------

TEST_F(MacosRunner, OutputReachesTheSinkByteForByte) {
  // 5 MB: many times the pipe's buffer, so the runner must read while the command writes.
  const Outcome outcome = run("yes abcdefgh | head -c 5000000; printf 'e\\0rr' >&2");
  EXPECT_EQ(describe(outcome), "exited 0");
  std::string expected;
  while (expected.size() < 5000000) expected += "abcdefgh\n";
  expected.resize(5000000);
  EXPECT_TRUE(sink_.out == expected) << "stdout: " << sink_.out.size() << " bytes";
  EXPECT_EQ(sink_.err, std::string("e\0rr", 4));
}

TEST_F(MacosRunner, StderrCanShareTheStdoutPipeInOrder) {
  RunOptions options;
  options.stderr_route = StderrRoute::Stdout;
  EXPECT_EQ(describe(run("echo a; echo b >&2; echo c", options)), "exited 0");
  EXPECT_EQ(sink_.out, "a\nb\nc\n");
  EXPECT_EQ(sink_.err, "");
}

TEST_F(MacosRunner, StdinReachesTheCommand) {
  ASSERT_TRUE(write_text(root_ / "input", "line one\nline two\n"));
  UniqueFd input(::open((root_ / "input").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(input);
  RunOptions options;
  options.stdin_fd = input.get();
  EXPECT_EQ(describe(run("tac", options)), "exited 0");
  EXPECT_EQ(sink_.out, "line two\nline one\n");
}

// As pid 1 of the Linux sandbox closes them: a descriptor the caller left inheritable does not
// reach the command.
TEST_F(MacosRunner, NoOtherDescriptorOfTheCallerReachesTheCommand) {
  UniqueFd inheritable(::open("/dev/null", O_RDONLY));  // no O_CLOEXEC
  ASSERT_TRUE(inheritable);
  const std::string fd = std::to_string(inheritable.get());
  EXPECT_EQ(describe(run("[ -e /proc/self/fd/" + fd + " ] && echo open || echo closed")),
            "exited 0");
  EXPECT_EQ(sink_.out, "closed\n");
}

// ---- private directories, environment, profile -------------------------------------------------

TEST_F(MacosRunner, TheCommandGetsPrivateDirectoriesTheProxyAndTheProfileForThem) {
  RunOptions options;
  options.proxy = recording_starter();
  const Outcome outcome =
      run("touch \"$TMPDIR/x\" \"$HOME/y\" && readlink \"$HOME/.gitconfig\" && echo \"cwd=$PWD\" "
          "&& env",
          options);
  ASSERT_EQ(describe(outcome), "exited 0") << sink_.err;
  auto env = parse_env(sink_.out);
  // The private directories: under the caller's TMPDIR, made for this command, gone afterwards.
  const fs::path temp = env["TMPDIR"], home = env["HOME"];
  EXPECT_EQ(temp.parent_path().parent_path(), root_ / "tmp");
  EXPECT_TRUE(temp.parent_path().filename().string().starts_with("pi-sandbox."));
  EXPECT_EQ(temp.filename(), "tmp");
  EXPECT_EQ(home, temp.parent_path() / "home");
  EXPECT_EQ(env["TMP"], temp.string());
  EXPECT_EQ(env["TEMP"], temp.string());
  EXPECT_FALSE(fs::exists(temp.parent_path()));
  EXPECT_TRUE(tmpdir_empty());
  // The home layer's link to the host's ~/.gitconfig (the profile lets it be read).
  EXPECT_TRUE(sink_.out.starts_with((root_ / "home/.gitconfig").string() + "\n")) << sink_.out;
  EXPECT_EQ(env["cwd"], (root_ / "ws").string());
  // The ProxyStarter got one listener of each kind, both accepting, and the credential.
  EXPECT_EQ(received_.http, 1u);
  EXPECT_EQ(received_.socks, 1u);
  EXPECT_TRUE(received_.http_accepts);
  EXPECT_TRUE(received_.socks_accepts);
  ASSERT_NE(received_.http_port, 0);
  ASSERT_NE(received_.socks_port, 0);
  EXPECT_NE(received_.http_port, received_.socks_port);
  EXPECT_EQ(received_.username, "pi-sandbox");
  EXPECT_EQ(received_.password.size(), 32u);
  EXPECT_TRUE(is_lower_hex(received_.password)) << received_.password;
  // The proxy's variables name those ports and that credential, replacing the Linux ones.
  const std::string userinfo = received_.username + ":" + received_.password;
  const std::string http =
      "http://" + userinfo + "@127.0.0.1:" + std::to_string(received_.http_port);
  const std::string socks =
      "socks5h://" + userinfo + "@127.0.0.1:" + std::to_string(received_.socks_port);
  EXPECT_EQ(env["HTTP_PROXY"], http);
  EXPECT_EQ(env["https_proxy"], http);
  EXPECT_EQ(env["ALL_PROXY"], socks);
  EXPECT_EQ(env["NO_PROXY"], "localhost,127.0.0.1,::1");
  EXPECT_EQ(env["CLOUDSDK_PROXY_PORT"], std::to_string(received_.http_port));
  EXPECT_EQ(env["CLOUDSDK_PROXY_PASSWORD"], received_.password);
  const policy::ProxyEndpoints endpoints{received_.http_port, received_.socks_port, userinfo};
  EXPECT_EQ(env["JAVA_TOOL_OPTIONS"], "-Xmx1g " + policy::java_proxy_options(endpoints));
  EXPECT_EQ(env["KEEP"], "me");
  EXPECT_EQ(env["PI_SANDBOX"], "1");
  std::size_t http_proxy_lines = 0;
  for (std::size_t at = 0; (at = sink_.out.find("\nHTTP_PROXY=", at)) != std::string::npos; ++at)
    ++http_proxy_lines;
  EXPECT_EQ(http_proxy_lines, 1u);
  // The profile sandbox-exec got: the planner's, for these directories, ports and workspace.
  const std::string profile = read_text(root_ / "profile");
  EXPECT_NE(profile.find("(remote ip \"localhost:" + std::to_string(received_.http_port) + "\")"),
            std::string::npos);
  EXPECT_NE(profile.find("(remote ip \"localhost:" + std::to_string(received_.socks_port) + "\")"),
            std::string::npos);
  const SeatbeltInputs inputs{temp, home, received_.http_port, received_.socks_port, {}};
  const auto scan = policy::scan_workspace(policy_.workspace, policy::ScanOptions{});
  EXPECT_EQ(profile,
            render(plan_seatbelt(
                policy_, policy::merge_protected(policy_.protected_paths, scan.protected_paths),
                inputs, host_path_exists)));
}

// ---- the proxy ---------------------------------------------------------------------------------

// A real proxy::Server started from the ProxyStarter with the credential, as the session's
// proxy_starter does (session/network_setup.cpp): curl inside the command reaches an origin
// through HTTP_PROXY and through ALL_PROXY (socks5h), both carrying the credential; the test
// process itself, without it, gets 407 (HTTP) and no acceptable method (SOCKS5), and nothing is
// decided for it.
TEST_F(MacosRunner,
       CurlReachesAnOriginThroughTheProxyAndAnotherProcessWithoutTheCredentialDoesNot) {
  PI_SANDBOX_REQUIRE(kNoTestNames.empty(),
                     "test names need a private mount namespace: " << kNoTestNames);
  PI_SANDBOX_REQUIRE(fs::exists("/usr/bin/curl"), "curl is not installed (/usr/bin/curl)");
  Origin origin;
  const std::string destination = "origin.test:" + std::to_string(origin.port());
  auto decided = std::make_shared<std::vector<std::string>>();
  auto mutex = std::make_shared<std::mutex>();
  std::string http_without, socks_without;
  RunOptions options;
  options.proxy = [&](ProxyListeners listeners) -> std::shared_ptr<void> {
    const std::uint16_t http_port = local_port(listeners.http.at(0).get());
    const std::uint16_t socks_port = local_port(listeners.socks.at(0).get());
    proxy::ServerOptions server_options;
    for (auto& fd : listeners.http) server_options.http_listeners.push_back(fd.release());
    for (auto& fd : listeners.socks) server_options.socks_listeners.push_back(fd.release());
    server_options.credential = proxy::ProxyCredential{listeners.username, listeners.password};
    server_options.decide = [decided, mutex](const std::string& host, std::uint16_t port) {
      std::lock_guard lock(*mutex);
      decided->push_back(host + ":" + std::to_string(port));
      return proxy::Decision{true, ""};
    };
    // The test seam: the origin is on 127.0.0.1, which production refuses.
    server_options.address_allowed = [](const asio::ip::address& address, std::string& why_not) {
      if (address == asio::ip::make_address("127.0.0.1")) return true;
      why_not = address.to_string() + ", which is not the test origin";
      return false;
    };
    auto server = std::make_shared<proxy::Server>(std::move(server_options));
    server->start();
    // Another local process (this one), without the credential.
    http_without = send_and_read(
        http_port, "GET http://" + destination + "/ HTTP/1.1\r\nHost: " + destination + "\r\n\r\n");
    socks_without = send_and_read(socks_port, std::string("\x05\x01\x00", 3));
    return server;
  };
  const std::string url = "http://" + destination + "/";
  const std::string curl = "curl -sS --max-time 20 --noproxy '' ";
  const Outcome outcome =
      run(curl + url + " && echo && " + curl + "-x \"$ALL_PROXY\" " + url, options);
  EXPECT_EQ(describe(outcome), "exited 0") << sink_.err;
  EXPECT_EQ(sink_.out, "origin\norigin");
  EXPECT_TRUE(http_without.starts_with("HTTP/1.1 407 ")) << http_without;
  EXPECT_EQ(socks_without, std::string("\x05\xff", 2));
  std::lock_guard lock(*mutex);
  EXPECT_EQ(*decided, std::vector<std::string>(2, destination));
}

}  // namespace
}  // namespace pisandbox::sandbox::macos
