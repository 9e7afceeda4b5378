// `pi-sandbox serve` driven over its real stdin/stdout (docs/protocol.md):
// concurrent commands, approval round trips, abort, timeout, malformed lines, 50 MiB of
// output with every byte delivered, and a host that goes away leaving nothing behind.
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "../unit/json_schema.hpp"
#include "approval_network.hpp"
#include "harness.hpp"
#include "protocol_schema.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const JsonSchema& protocol_schema() {
  static const JsonSchema parsed(json::parse(kProtocolSchema));
  return parsed;
}

/// The processes whose environment holds `HOME=<home>`: serve, its workers and their
/// sandboxes run with a scratch's HOME (Scratch::env()), so these are what is left of them.
std::vector<pid_t> processes_with_home(const fs::path& home) {
  const std::string entry = "HOME=" + home.string();
  std::vector<pid_t> found;
  for (const auto& dir : fs::directory_iterator("/proc")) {
    const std::string name = dir.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(dir.path() / "environ", std::ios::binary);
    for (std::string var; std::getline(in, var, '\0');)
      if (var == entry) found.push_back(std::stoi(name));
  }
  return found;
}

/// One `pi-sandbox serve` with pipes to its stdin and stdout.
class Serve {
 public:
  /// `network`: run inside the private approval network; `prefix` (e.g.
  /// IsolatedNetwork::enter()) runs before `pi-sandbox serve`.
  explicit Serve(const Scratch& scratch, std::vector<std::string> extra = {},
                 const ApprovalNetwork* network = nullptr, std::vector<std::string> prefix = {})
      : home_(scratch.home) {
    std::vector<std::string> argv = std::move(prefix);
    argv.push_back(sandbox_binary());
    argv.push_back("serve");
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (network == nullptr) {
      pid_ = spawn_piped(argv, scratch.env(), in_, out_);
    } else {
      pid_ = spawn_piped(network->inside(argv), ApprovalNetwork::without_proxies(scratch.env()),
                         in_, out_);
    }
  }
  /// Ends serve as a host does, by closing its stdin, and waits for it (its unread events
  /// drained), so that serve settles what is still open (an unanswered question, a command)
  /// and reaps its workers itself. Killed only when it has not ended after 30 s, a failure:
  /// its workers would then settle and write (the audit log) after the test's scratch is gone.
  ~Serve() {
    if (in_ >= 0) ::close(in_);
    if (pid_ > 0) {
      const auto deadline = std::chrono::steady_clock::now() + 30s;
      while (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
          ADD_FAILURE() << "serve did not end within 30 s of the end of its stdin";
          ::kill(pid_, SIGKILL);
          wait_process(pid_);
          break;
        }
        pollfd p{out_, POLLIN, 0};
        char chunk[1 << 16];
        if (::poll(&p, 1, 50) > 0 && ::read(out_, chunk, sizeof chunk) <= 0)
          std::this_thread::sleep_for(50ms);  // serve closed its stdout before it ended
      }
    }
    if (out_ >= 0) ::close(out_);
    // Nothing of serve outlives it (docs/protocol.md: "nothing is left on the host").
    EXPECT_EQ(processes_with_home(home_), std::vector<pid_t>{});
  }
  void send(const json& request) { send_line(request.dump()); }
  void send_line(const std::string& line) {
    const std::string data = line + "\n";
    ASSERT_EQ(::write(in_, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  }
  /// The next event, or a null json after `limit` without one.
  json next(std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      if (const auto lf = buffer_.find('\n'); lf != std::string::npos) {
        const std::string line = buffer_.substr(0, lf);
        buffer_.erase(0, lf + 1);
        json event = json::parse(line);
        // Every event the real serve writes is one docs/protocol.schema.json describes.
        EXPECT_EQ(protocol_schema().check(event, "event"), "") << line;
        return event;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return nullptr;
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[1 << 16];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return nullptr;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  /// Events up to and including the `exit` of `id` (others are kept in `other`).
  std::vector<json> until_exit(const std::string& id, std::vector<json>* other = nullptr) {
    std::vector<json> events;
    for (json e = next(); !e.is_null(); e = next()) {
      if (e.value("id", "") != id) {
        if (other != nullptr) other->push_back(e);
        continue;
      }
      events.push_back(e);
      if (e["type"] == "exit") break;
    }
    return events;
  }
  void close_stdin() {
    ::close(in_);
    in_ = -1;
  }
  int wait() {
    const int code = wait_process(pid_);
    pid_ = -1;
    return code;
  }
  pid_t pid() const { return pid_; }
  /// Bytes serve has written to its stdout that this test has not read yet (FIONREAD), and the
  /// capacity of that pipe (F_GETPIPE_SZ): both in bytes.
  std::pair<int, int> unread() const {
    int bytes = 0;
    (void)::ioctl(out_, FIONREAD, &bytes);
    return {bytes, ::fcntl(out_, F_GETPIPE_SZ)};
  }
  /// The exit code (128 + signal when killed) once serve has ended, or -1 when it is still
  /// running after `limit` (the destructor kills it then).
  int wait_at_most(std::chrono::seconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t got = ::waitpid(pid_, &status, WNOHANG);
      if (got == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }

 private:
  fs::path home_;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
};

/// User, network and mount namespaces held by a sleeping process, in which /etc/hosts is
/// `hosts` and the network has no route (not even a loopback that is up): a name of `hosts`
/// resolves there, to a public-looking address, and connecting to it fails at once (network
/// unreachable). The proxy resolves and checks a destination before anyone is asked
/// (docs/approvals.md, "The order of a decision"), so a question needs a name that resolves.
class IsolatedNetwork {
 public:
  IsolatedNetwork(const Scratch& scratch, const std::string& hosts) {
    write_file(scratch.root / "hosts", hosts);
    const fs::path ready = scratch.root / "isolated.ready";
    holder_ = spawn_process(
        {"/usr/bin/setsid", "/usr/bin/unshare", "--user", "--map-current-user", "--keep-caps",
         "--net", "--mount", "--propagation", "private", "/bin/sh", "-c",
         "mount --bind \"$0\" /etc/hosts && touch \"$1\" && exec sleep infinity",
         (scratch.root / "hosts").string(), ready.string()});
    for (int i = 0; i < 500 && !fs::exists(ready); ++i) std::this_thread::sleep_for(10ms);
    ready_ = fs::exists(ready);
  }
  ~IsolatedNetwork() {
    if (holder_ > 0) {
      ::kill(-holder_, SIGKILL);
      wait_process(holder_);
    }
  }
  [[nodiscard]] bool ready() const { return ready_; }
  /// The prefix that runs a program in these namespaces, as the calling user.
  [[nodiscard]] std::vector<std::string> enter() const {
    return {"/usr/bin/nsenter",
            "--preserve-credentials",
            "-U",
            "-n",
            "-m",
            "-t",
            std::to_string(holder_),
            "--"};
  }

 private:
  pid_t holder_ = -1;
  bool ready_ = false;
};

std::string decode(const json& output) {
  const std::string data = output["data"];
  if (output.value("encoding", "") != "base64") return data;
  std::string bytes(data.size(), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                                reinterpret_cast<const unsigned char*>(data.data()),
                                static_cast<int>(data.size()));
  bytes.resize(static_cast<std::size_t>(n) - (data.ends_with("==")  ? 2
                                              : data.ends_with("=") ? 1
                                                                    : 0));
  return bytes;
}

/// stdout and stderr of one command's events.
std::pair<std::string, std::string> streams(const std::vector<json>& events) {
  std::string out, err;
  for (const auto& e : events)
    if (e["type"] == "output") (e["stream"] == "stdout" ? out : err) += decode(e);
  return {out, err};
}

json exec(const std::string& id, const std::string& command, const fs::path& cwd) {
  return {{"type", "exec"}, {"id", id}, {"command", command}, {"cwd", cwd.string()}};
}

TEST(Serve, HelloAndOneCommand) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send({{"type", "hello"}, {"version", 1}});
  EXPECT_EQ(serve.next(),
            json::parse(R"({"type":"hello","version":1,"server":"pi-sandbox )" PI_SANDBOX_VERSION
                        R"(","sandbox":"linux"})"));
  serve.send(exec("c1", "echo out; echo err >&2; echo x > /etc/x; exit 3", scratch.ws));
  const auto events = serve.until_exit("c1");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front(), json::parse(R"({"type":"started","id":"c1"})"));
  EXPECT_EQ(events.back(), json::parse(R"({"type":"exit","id":"c1","exit_code":3})"));
  const auto [out, err] = streams(events);
  EXPECT_EQ(out, "out\n");
  EXPECT_EQ(err, "err\n/bin/bash: line 1: /etc/x: Read-only file system\n");
}

// The warning that the workspace contains the home is said once per session, with the
// session's first command, as the no-cgroup warning; `run` says it every time.
TEST(Serve, TheHomeAsTheWorkspaceIsSaidOncePerSession) {
  Scratch scratch;
  const std::string warning = "pi-sandbox: warning: the workspace contains the home directory ";
  const auto count = [&](const std::string& text) {
    std::size_t n = 0;
    for (auto at = text.find(warning); at != std::string::npos; at = text.find(warning, at + 1))
      ++n;
    return n;
  };
  Serve serve(scratch);
  serve.send({{"type", "hello"}, {"version", 1}});
  (void)serve.next();
  for (const char* id : {"h1", "h2", "h3"}) {
    serve.send(exec(id, "true", scratch.home));
    const auto [out, err] = streams(serve.until_exit(id));
    EXPECT_EQ(count(err), std::string_view(id) == "h1" ? 1u : 0u) << id << ": " << err;
  }
  EXPECT_EQ(count(scratch.run("true", {}, scratch.home).err), 1u);
  EXPECT_EQ(count(scratch.run("true", {}, scratch.home).err), 1u);
}

TEST(Serve, StderrIntoStdoutKeepsTheOrderTheCommandWroteIn) {
  Scratch scratch;
  Serve serve(scratch);
  // 200 alternating writes without a pause: with two pipes the supervisor reads whichever
  // has data, so the streams come apart; with one they arrive as written.
  const std::string command = "for i in $(seq 100); do echo o$i; echo e$i >&2; done";
  json merged = exec("m", command, scratch.ws);
  merged["stderr"] = "stdout";
  serve.send(merged);
  const auto events = serve.until_exit("m");
  std::string expected;
  for (int i = 1; i <= 100; ++i)
    expected += "o" + std::to_string(i) + "\ne" + std::to_string(i) + "\n";
  const auto [out, err] = streams(events);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(err, "");
  EXPECT_EQ(events.back()["exit_code"], 0);
}

TEST(Serve, ConcurrentCommandsInterleaveAndStayApart) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send(exec("a", "for i in 1 2 3; do echo a$i; sleep 0.2; done", scratch.ws));
  serve.send(exec("b", "for i in 1 2 3; do echo b$i; sleep 0.2; done; exit 4", scratch.ws));
  std::map<std::string, std::string> out;
  std::map<std::string, json> exits;
  std::vector<std::string> order;
  while (exits.size() < 2) {
    const json e = serve.next();
    ASSERT_FALSE(e.is_null());
    if (e["type"] == "output") {
      out[e["id"]] += decode(e);
      order.push_back(e["id"]);
    }
    if (e["type"] == "exit") exits[e["id"]] = e;
  }
  EXPECT_EQ(out["a"], "a1\na2\na3\n");
  EXPECT_EQ(out["b"], "b1\nb2\nb3\n");
  EXPECT_EQ(exits["a"]["exit_code"], 0);
  EXPECT_EQ(exits["b"]["exit_code"], 4);
  // Both ran at once: their output events alternate rather than one after the other.
  EXPECT_NE(std::vector<std::string>(order.begin(), order.begin() + 3),
            (std::vector<std::string>{order[0], order[0], order[0]}));
}

TEST(Serve, MalformedLinesGetErrorsAndTheServerCarriesOn) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send_line("not json");
  EXPECT_TRUE(serve.next()["message"].get<std::string>().starts_with("line is not valid JSON: "));
  serve.send_line(R"({"type":"launch"})");
  EXPECT_EQ(serve.next(),
            json::parse(R"({"type":"error","message":"unknown request type \"launch\""})"));
  serve.send_line(R"({"type":"exec","id":"x","command":"true","cwd":"relative"})");
  EXPECT_EQ(
      serve.next(),
      json::parse(
          R"({"type":"error","message":"exec \"x\": \"cwd\" must be an absolute path","id":"x"})"));
  serve.send_line(R"({"type":"abort","id":"nobody"})");
  EXPECT_EQ(
      serve.next(),
      json::parse(R"({"type":"error","message":"unknown command id \"nobody\"","id":"nobody"})"));
  serve.send_line(R"({"type":"hello","version":2})");
  EXPECT_EQ(serve.next()["message"], "unsupported protocol version 2 (this server speaks 1)");
  serve.send(exec("ok", "echo still here", scratch.ws));
  EXPECT_EQ(streams(serve.until_exit("ok")).first, "still here\n");
}

TEST(Serve, AbortKillsTheWholeSandbox) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send(exec("s", "sleep 611 & sleep 612", scratch.ws));
  EXPECT_EQ(serve.next()["type"], "started");
  std::this_thread::sleep_for(300ms);
  serve.send({{"type", "abort"}, {"id", "s"}});
  const auto events = serve.until_exit("s");
  EXPECT_EQ(events.back(), json::parse(R"({"type":"exit","id":"s","error":"aborted"})"));
  EXPECT_TRUE(wait_until_gone("sleep 611"));
  EXPECT_TRUE(wait_until_gone("sleep 612"));
}

TEST(Serve, Timeout) {
  Scratch scratch;
  Serve serve(scratch);
  json request = exec("t", "sleep 613", scratch.ws);
  request["timeout_s"] = 0.5;
  serve.send(request);
  EXPECT_EQ(
      serve.until_exit("t").back(),
      json::parse(
          R"({"type":"exit","id":"t","error":"timeout","message":"command timed out after 0.5 seconds"})"));
  EXPECT_TRUE(wait_until_gone("sleep 613"));
}

TEST(Serve, StdinPipeAndArgv) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send({{"type", "exec"},
              {"id", "p"},
              {"argv", {"/usr/bin/tr", "a-z", "A-Z"}},
              {"cwd", scratch.ws.string()},
              {"stdin", "pipe"}});
  serve.send({{"type", "stdin"}, {"id", "p"}, {"data", "hello "}});
  serve.send({{"type", "stdin"}, {"id", "p"}, {"data", "d29ybGQK"}, {"encoding", "base64"}});
  serve.send({{"type", "stdin_close"}, {"id", "p"}});
  const auto events = serve.until_exit("p");
  EXPECT_EQ(streams(events).first, "HELLO WORLD\n");
  EXPECT_EQ(events.back()["exit_code"], 0);
}

TEST(Serve, FiftyMebibytesArriveByteForByte) {
  Scratch scratch;
  Serve serve(scratch);
  // Every byte value, so most events are base64; 50 MiB in all.
  serve.send(exec("big",
                  "python3 -c 'import sys; b = bytes(range(256)) * 4096\n"
                  "for _ in range(50): sys.stdout.buffer.write(b)'",
                  scratch.ws));
  std::string expected;
  for (int i = 0; i < 4096; ++i)
    for (int c = 0; c < 256; ++c) expected.push_back(static_cast<char>(c));
  const auto events = serve.until_exit("big");
  const auto [out, err] = streams(events);
  EXPECT_EQ(err, "");
  ASSERT_EQ(out.size(), 50u * 1024 * 1024);
  for (std::size_t at = 0; at < out.size(); at += expected.size())
    ASSERT_EQ(out.compare(at, expected.size(), expected), 0) << "at byte " << at;
  EXPECT_EQ(events.back()["exit_code"], 0);
}

TEST(Serve, HostIpcApprovalRoundTrips) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  write_file(config, R"({"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["printf"]}})");
  Serve serve(scratch, {"--config", config.string()});
  const std::string command = "printf 'ran on %s\\n' \"${PI_SANDBOX:-the host}\"";
  for (const std::string choice : {"allow-once", "deny"}) {
    serve.send(exec(choice, command, scratch.ws));
    EXPECT_EQ(serve.next()["type"], "started");
    const json ask = serve.next();
    ASSERT_EQ(ask["type"], "approval_request") << ask.dump();
    EXPECT_EQ(ask["title"], "Sandbox approval required: execute-host " + command);
    EXPECT_EQ(ask["warning"], "Warning: this command will run on the host outside the OS sandbox.");
    EXPECT_EQ(ask["request"]["surface"], "host-ipc");
    EXPECT_EQ(ask["request"]["matchedPolicy"]["rule"], "preflight-prefix:printf");
    EXPECT_EQ(
        ask["choices"],
        json::parse(
            R"([{"choice":"deny","label":"Deny"},{"choice":"allow-once","label":"Allow this exact operation once"}])"));
    EXPECT_FALSE(ask.contains("expires_in_s"));
    serve.send({{"type", "approval_response"},
                {"id", choice},
                {"request_id", ask["request_id"]},
                {"choice", choice}});
    const auto events = serve.until_exit(choice);
    const auto [out, err] = streams(events);
    if (choice == "allow-once") {
      EXPECT_EQ(out, "ran on the host\n");
      EXPECT_EQ(events.back()["exit_code"], 0);
    } else {
      EXPECT_EQ(out, "");
      EXPECT_EQ(err, "pi-sandbox: host-IPC execution denied: Denied by the user.\n");
      EXPECT_EQ(events.back()["exit_code"], 1);
      bool denied = false;
      for (const auto& e : events)
        if (e["type"] == "denied")
          denied = e == json{{"type", "denied"},
                             {"id", "deny"},
                             {"surface", "host-ipc"},
                             {"target", command},
                             {"reason", "Denied by the user."},
                             {"source", "human"}};
      EXPECT_TRUE(denied);
    }
  }
}

TEST(Serve, AnswersBindToOneOpenQuestionAndTheFirstIsFinal) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  write_file(config, R"({"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["printf"]}})");
  Serve serve(scratch, {"--config", config.string()});
  const std::string marker = (scratch.root / "ran-on-host").string();
  serve.send(exec("c", "printf x > " + marker, scratch.ws));
  // An answer sent before any question (or left over from an earlier command with this id)
  // matches nothing.
  serve.send(
      {{"type", "approval_response"}, {"id", "c"}, {"request_id", "r1"}, {"choice", "allow-once"}});
  std::vector<json> events;
  json ask;
  for (json e = serve.next(); !e.is_null(); e = serve.next()) {
    events.push_back(e);
    if (e["type"] == "approval_request") {
      ask = e;
      break;
    }
  }
  ASSERT_FALSE(ask.is_null());
  const std::string request_id = ask["request_id"];
  EXPECT_TRUE(request_id.starts_with("r-")) << request_id;
  EXPECT_EQ(request_id.size(), 2u + 36u) << request_id;  // a UUID
  // A deny and an allow in one write: the deny is final, the allow is refused.
  serve.send_line(json{{"type", "approval_response"},
                       {"id", "c"},
                       {"request_id", request_id},
                       {"choice", "deny"}}
                      .dump() +
                  "\n" +
                  json{{"type", "approval_response"},
                       {"id", "c"},
                       {"request_id", request_id},
                       {"choice", "allow-once"}}
                      .dump());
  std::vector<json> rest = serve.until_exit("c");
  events.insert(events.end(), rest.begin(), rest.end());
  EXPECT_EQ(events.back()["exit_code"], 1);
  EXPECT_FALSE(fs::exists(marker));
  std::vector<std::string> errors;
  for (const auto& e : events)
    if (e["type"] == "error") errors.push_back(e["message"]);
  // The early answer is refused. The second answer is refused too, unless the command (its
  // deny being final) ended before its worker read that line: either way it changed nothing.
  ASSERT_GE(errors.size(), 1u);
  EXPECT_EQ(errors[0], "approval_response: unknown request_id \"r1\"");
  EXPECT_LE(errors.size(), 2u);
  if (errors.size() == 2) {
    EXPECT_EQ(errors[1], "approval_response: unknown request_id \"" + request_id + "\"");
  }
}

TEST(Serve, NetworkApprovalRoundTrips) {
  Scratch scratch;
  // A name that resolves to a public address with no route to it: an allow reaches the
  // connection attempt (502), a deny stops at 403.
  const IsolatedNetwork network(scratch, "203.0.113.77 approval-test.invalid\n");
  PI_SANDBOX_REQUIRE(network.ready(), "no user, network and mount namespaces for the test");
  Serve serve(scratch, {}, nullptr, network.enter());
  const std::string command =
      "curl -s -o /dev/null -w '%{http_code}' http://approval-test.invalid/";
  for (const std::string choice : {"allow-once", "deny"}) {
    serve.send(exec(choice, command, scratch.ws));
    json ask;
    for (ask = serve.next(); !ask.is_null() && ask["type"] != "approval_request";
         ask = serve.next()) {
    }
    ASSERT_FALSE(ask.is_null());
    EXPECT_EQ(ask["title"], "Sandbox approval required: connect approval-test.invalid:80");
    EXPECT_EQ(ask["request"]["destination"], "approval-test.invalid:80");
    EXPECT_EQ(ask["request"]["command"], command);
    EXPECT_EQ(ask["choices"][2]["label"],
              "Allow approval-test.invalid:80 for the rest of this command");
    serve.send({{"type", "approval_response"},
                {"id", choice},
                {"request_id", ask["request_id"]},
                {"choice", choice}});
    const auto events = serve.until_exit(choice);
    EXPECT_EQ(streams(events).first, choice == "deny" ? "403" : "502");
    // An allowed destination that cannot be reached says why (docs/network.md, "Answers the
    // command sees").
    const bool says_why = streams(events).second.find(
                              "pi-sandbox: network: approval-test.invalid:80: network is "
                              "unreachable (203.0.113.77:80)\n") != std::string::npos;
    EXPECT_EQ(says_why, choice != "deny") << streams(events).second;
  }
}

TEST(Serve, TheHostGoingAwayLeavesNothingBehind) {
  for (const bool kill_serve : {false, true}) {
    Scratch scratch;
    const auto before = list_dir(scratch.ws);
    Serve serve(scratch);
    serve.send(exec("left", "sleep 614", scratch.ws));
    EXPECT_EQ(serve.next()["type"], "started");
    // Wait until the command runs (its placeholders exist then).
    for (int i = 0; i < 100 && !process_running("sleep 614"); ++i)
      std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(process_running("sleep 614"));
    if (kill_serve) {
      ::kill(serve.pid(), SIGKILL);
      serve.wait();
    } else {
      serve.close_stdin();
      EXPECT_EQ(serve.until_exit("left").back(),
                json::parse(R"({"type":"exit","id":"left","error":"aborted"})"));
      EXPECT_EQ(serve.wait(), 0);
    }
    EXPECT_TRUE(wait_until_gone("sleep 614"));
    EXPECT_TRUE(wait_until_gone("serve-worker"));
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(list_dir(scratch.ws), before);
  }
}

/// The `launch_failed` messages of two execs (one with a stdin pipe) sent to serve started
/// with `nofile` descriptors at most (prlimit(1)), and serve's exit code after `shutdown` or,
/// with `sigterm`, SIGTERM (-1: still running after a minute).
std::pair<std::set<std::string>, int> starved_serve(const Scratch& scratch, int nofile,
                                                    bool sigterm) {
  Serve serve(scratch, {}, nullptr, {"/usr/bin/prlimit", "--nofile=" + std::to_string(nofile)});
  serve.send(exec("a", "true", scratch.ws));
  json with_pipe = exec("b", "true", scratch.ws);
  with_pipe["stdin"] = "pipe";
  serve.send(with_pipe);
  std::set<std::string> failures;
  for (int exits = 0; exits < 2;) {
    const json e = serve.next();
    if (e.is_null()) break;
    if (e["type"] != "exit") continue;
    ++exits;
    EXPECT_EQ(e.value("error", ""), "launch_failed") << e.dump();
    failures.insert(e.value("message", ""));
  }
  if (sigterm)
    ::kill(serve.pid(), SIGTERM);
  else
    serve.send(json{{"type", "shutdown"}});
  return {failures, serve.wait_at_most(60s)};
}

// Out of descriptors, each step of starting a worker fails in its turn as the limit rises
// (pipe2, open of /dev/null, pidfd_open, the worker's own dup): every exec ends with
// `launch_failed` naming the call, no worker is left unwatched, and serve still ends on
// `shutdown` and on SIGTERM with 0 (docs/protocol.md) instead of spinning on a worker it cannot
// reap. The minute is a bound that tells "ends" from "never ends", not a timing.
TEST(Serve, OutOfDescriptorsEveryExecFailsNamingTheCallAndServeStillEnds) {
  Scratch scratch;
  std::set<std::string> failures;
  for (int nofile = 5; nofile <= 10; ++nofile) {
    for (const bool sigterm : {false, true}) {
      const auto [seen, code] = starved_serve(scratch, nofile, sigterm);
      EXPECT_EQ(code, 0) << "nofile " << nofile << (sigterm ? ", SIGTERM" : ", shutdown");
      failures.insert(seen.begin(), seen.end());
    }
  }
  EXPECT_EQ(failures, (std::set<std::string>{
                          "pipe2(): Too many open files",
                          "open(\"/dev/null\"): Too many open files",
                          "pidfd_open(): Too many open files",
                          "the command's worker ended without a result (exit status 127)",
                      }));
  EXPECT_TRUE(wait_until_gone("serve-worker"));
}

/// What writer(`id`, `lines`) writes: `lines` lines of 64 KiB, "<id><n>" padded with x.
std::string pattern(const std::string& id, int lines) {
  std::string all;
  for (int n = 0; n < lines; ++n) {
    std::string line = id + std::to_string(n);
    line.resize(65535, 'x');
    all += line + "\n";
  }
  return all;
}

/// An exec `id` that writes pattern(`id`, `lines`) to stdout, then creates `<id>.done`.
json writer(const std::string& id, int lines, const fs::path& cwd) {
  return exec(id,
              "python3 -c 'import sys\nfor n in range(" + std::to_string(lines) +
                  "): sys.stdout.write((\"" + id +
                  "\" + str(n)).ljust(65535, \"x\") + \"\\n\")' && touch " + id + ".done",
              cwd);
}

/// The VmHWM of process `pid` (its peak resident memory) in KiB, from /proc/PID/status.
long peak_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmHWM:")) return std::stol(line.substr(6));
  return -1;
}

/// Waits (up to a minute: a bound, not a timing) until serve has filled its stdout pipe: the
/// test has stopped reading and serve cannot write more. Full is within two pages of the
/// capacity (a page of a pipe's ring is not always filled, pipe(7)) and no longer growing.
bool stdout_full(const Serve& serve) {
  int last = -1;
  for (int i = 0; i < 600; ++i) {
    const auto [bytes, capacity] = serve.unread();
    if (bytes >= capacity - 8192 && bytes == last) return true;
    last = bytes;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// A host that stops reading stdout stalls no one but the commands whose output waits for it:
// serve still takes requests (a new exec runs, an abort kills), its memory stays bounded
// (HostOutput::kEventsBound, docs/protocol.md "Flow control"), the writers wait instead of
// finishing, and once the host reads again every byte of every command arrives, in order.
TEST(Serve, AHostThatStopsReadingHoldsBackOutputButNotServe) {
  Scratch scratch;
  Serve serve(scratch);
  const int lines = 256;  // 16 MiB each
  serve.send(writer("a", lines, scratch.ws));
  serve.send(writer("b", lines, scratch.ws));
  ASSERT_TRUE(stdout_full(serve));
  serve.send(exec("c", "touch c.ran; exec sleep 615", scratch.ws));
  for (int i = 0; i < 200 && !fs::exists(scratch.ws / "c.ran"); ++i)
    std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(fs::exists(scratch.ws / "c.ran")) << "serve took no request while blocked";
  serve.send({{"type", "abort"}, {"id", "c"}});
  EXPECT_TRUE(wait_until_gone("sleep 615"));
  EXPECT_FALSE(fs::exists(scratch.ws / "a.done"));
  EXPECT_FALSE(fs::exists(scratch.ws / "b.done"));
  // Twice the bound and the pipes: far less than the 32 MiB waiting in the writers.
  EXPECT_LT(peak_kib(serve.pid()), 24 * 1024);
  std::map<std::string, std::vector<json>> events;
  for (int exits = 0; exits < 3;) {
    const json e = serve.next(60s);
    ASSERT_FALSE(e.is_null());
    events[e["id"]].push_back(e);
    if (e["type"] == "exit") ++exits;
  }
  for (const std::string id : {"a", "b"}) {
    EXPECT_EQ(events[id].front()["type"], "started");
    EXPECT_EQ(events[id].back(), json({{"type", "exit"}, {"id", id}, {"exit_code", 0}}));
    const auto [out, err] = streams(events[id]);
    EXPECT_EQ(err, "");
    EXPECT_TRUE(out == pattern(id, lines)) << id << ": " << out.size() << " bytes";
    EXPECT_TRUE(fs::exists(scratch.ws / (id + ".done")));
  }
  EXPECT_EQ(events["c"].back(), json::parse(R"({"type":"exit","id":"c","error":"aborted"})"));
}

// SIGTERM ends serve although its host reads nothing: the commands are stopped and, after the
// grace of 10 seconds (docs/protocol.md), what the host did not read is given up. The minute
// is a bound that tells "ends" from "never ends", not a timing.
TEST(Serve, SigtermEndsServeWhoseHostReadsNothing) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send(writer("a", 256, scratch.ws));
  serve.send(exec("s", "exec sleep 617", scratch.ws));
  ASSERT_TRUE(stdout_full(serve));
  ::kill(serve.pid(), SIGTERM);
  EXPECT_EQ(serve.wait_at_most(60s), 0);
  EXPECT_TRUE(wait_until_gone("sleep 617"));
  EXPECT_TRUE(wait_until_gone("serve-worker"));
  EXPECT_FALSE(fs::exists(scratch.ws / "a.done"));
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

/// Whether this run has a cgroup per command (scripts/test says so with
/// PI_SANDBOX_TEST_LIMITS; else `pi-sandbox doctor` does).
bool has_cgroups() {
  if (const char* mode = ::getenv("PI_SANDBOX_TEST_LIMITS")) return std::string(mode) == "cgroup";
  return run_process({sandbox_binary(), "doctor"}).out.find("ok       a cgroup per command") !=
         std::string::npos;
}

TEST(Serve, AnExitAfterTheMemoryLimitSaysSo) {
  if (!has_cgroups()) {
    GTEST_SUCCEED() << "this run of the suite tests the limits without a cgroup";
    return;
  }
  Scratch scratch;
  const fs::path config = scratch.root / "limits.json";
  write_file(config, R"({"limits": {"memory": 134217728}})");
  Serve serve(scratch, {"--config", config.string()});
  // The limit is in force before the hog runs (the machine is shared with the suite).
  serve.send(exec("proof",
                  "cat /sys/fs/cgroup/memory$(awk -F: '$2==\"memory\"{print $3}' "
                  "/proc/self/cgroup)/memory.limit_in_bytes",
                  scratch.ws));
  const auto proof = serve.until_exit("proof");
  ASSERT_EQ(streams(proof).first, "134217728\n");
  serve.send(
      exec("hog", "python3 -c 'x = []\nwhile True: x.append(bytearray(8 << 20))'", scratch.ws));
  const auto events = serve.until_exit("hog");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(),
            json::parse(R"({"type":"exit","id":"hog","signal":9,"limit":"memory"})"));
  EXPECT_EQ(streams(events).second,
            "pi-sandbox: the command was killed: out of memory (limit 128 MiB)\n");
}

TEST(Serve, SixtyFourConcurrentCommandsEachHaveACgroupAndNoneIsLeft) {
  if (!has_cgroups()) {
    GTEST_SUCCEED() << "this run of the suite tests the limits without a cgroup";
    return;
  }
  Scratch scratch;
  Serve serve(scratch);
  for (int i = 0; i < 64; ++i)
    serve.send(exec("c" + std::to_string(i), "sleep 0.5; grep pids /proc/self/cgroup", scratch.ws));
  std::set<std::string> groups;
  int exits = 0;
  while (exits < 64) {
    const json e = serve.next(60s);
    if (e.is_null()) break;
    if (e["type"] == "output") groups.insert(decode(e));
    if (e["type"] == "exit") {
      EXPECT_EQ(e.value("exit_code", -1), 0) << e.dump();
      ++exits;
    }
  }
  EXPECT_EQ(exits, 64);
  EXPECT_EQ(groups.size(), 64u);
  // Every one of those cgroups is gone once its command has ended: removed by its worker right
  // after the exit event, which reaches the host first (RunOptions::teardown).
  for (std::string group : groups) {
    group = group.substr(group.rfind(':') + 1);
    if (group.ends_with('\n')) group.pop_back();
    const fs::path dir = fs::path("/sys/fs/cgroup/pids") / fs::path(group).relative_path();
    for (int i = 0; i < 200 && fs::exists(dir); ++i) std::this_thread::sleep_for(50ms);
    EXPECT_FALSE(fs::exists(dir)) << group;
  }
}

TEST(Serve, AnExecsEnvironmentLosesItsCredentialsAndADirectConnectionGetsTheHint) {
  Scratch scratch;
  Serve serve(scratch);
  json request = exec("env",
                      R"(printf '%s|%s|%s\n' "${GH_TOKEN-unset}" "$KEEP" "$HTTPS_PROXY"; )"
                      "python3 -c \"import socket\n"
                      "try: socket.create_connection(('192.0.2.1', 80), timeout=5)\n"
                      "except OSError as e: print(e.errno)\"",
                      scratch.ws);
  request["env"] = {
      {"PATH", "/usr/bin:/bin"}, {"HOME", scratch.home.string()}, {"GH_TOKEN", "t"}, {"KEEP", "k"}};
  serve.send(request);
  const auto events = serve.until_exit("env");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), json::parse(R"({"type":"exit","id":"env","exit_code":0})"));
  const auto [out, err] = streams(events);
  EXPECT_EQ(out, "unset|k|http://127.0.0.1:3128\n101\n");
  EXPECT_EQ(err,
            "pi-sandbox: the command tried to connect directly, not through the proxy; some "
            "clients ignore HTTP_PROXY: see docs/network.md, \"Clients that ignore the proxy\"\n");
}

// `env_keep` (docs/protocol.md, "Requests"): what the host deliberately gives a command (a
// subagent's model API key) survives the credential filter, named exactly; every other credential
// is removed as before, and the trusted configuration's `environment.remove` still wins.
TEST(Serve, EnvKeepKeepsTheNamedCredentialsOnly) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  write_file(config, R"({"environment":{"remove":["DROPPED_KEY"]}})");
  Serve serve(scratch, {"--config", config.string()});
  json request = exec("keep",
                      R"(printf '%s|%s|%s|%s\n' "${GIVEN_API_KEY-unset}" "${OTHER_API_KEY-unset}" )"
                      R"("${GH_TOKEN-unset}" "${DROPPED_KEY-unset}")",
                      scratch.ws);
  request["env"] = {{"PATH", "/usr/bin:/bin"}, {"HOME", scratch.home.string()},
                    {"GIVEN_API_KEY", "g"},    {"OTHER_API_KEY", "o"},
                    {"GH_TOKEN", "t"},         {"DROPPED_KEY", "d"}};
  request["env_keep"] = {"GIVEN_API_KEY", "DROPPED_KEY"};
  serve.send(request);
  const auto events = serve.until_exit("keep");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), json::parse(R"({"type":"exit","id":"keep","exit_code":0})"));
  EXPECT_EQ(streams(events).first, "g|unset|unset|unset\n");
}

}  // namespace
}  // namespace pisandbox::testing

// ---- Approvals through serve (docs/protocol.md, "Answers, sources and reasons"): choices, session
// answers, the breaker of a scope_key across commands, settled questions, deadlines and reasons end
// to end. Inside a private network where asked.test and other.test answer over HTTP
// (approval_network.hpp).

namespace pisandbox::testing {
namespace {

/// curl's HTTP status for `host` through the proxy, on its own line.
std::string status_of(const std::string& host, const std::string& path = "/") {
  return "curl -s -o /dev/null -w '%{http_code}\\n' http://" + host + path;
}

json answer(const std::string& id, const json& request_id, const std::string& choice,
            std::optional<std::string> source = std::nullopt,
            std::optional<std::string> reason = std::nullopt) {
  json line = {
      {"type", "approval_response"}, {"id", id}, {"request_id", request_id}, {"choice", choice}};
  if (source) line["source"] = *source;
  if (reason) line["reason"] = *reason;
  return line;
}

/// The events of type `type` among `events`.
std::vector<json> of_type(const std::vector<json>& events, const std::string& type) {
  std::vector<json> out;
  for (const auto& e : events)
    if (e["type"] == type) out.push_back(e);
  return out;
}

const json kNetworkChoices = json::parse(
    R"([{"choice":"deny","label":"Deny"},)"
    R"({"choice":"allow-once","label":"Allow this exact operation once"},)"
    R"({"choice":"allow-command","label":"Allow asked.test:80 for the rest of this command"},)"
    R"({"choice":"allow-session","label":"Allow asked.test:80 for this session"}])");

class ServeApprovals : public ApprovalNetworkSuite {
 protected:
  /// Reads events until the next `approval_request`; the others go to `seen`.
  static json next_question(Serve& serve, std::vector<json>& seen) {
    for (json e = serve.next(); !e.is_null(); e = serve.next()) {
      if (e["type"] == "approval_request") return e;
      seen.push_back(e);
    }
    return nullptr;
  }
  /// A trusted configuration file with `text`, outside the workspace.
  std::string config(const std::string& text) const {
    const fs::path path = scratch_.root / "config.json";
    write_file(path, text);
    return path.string();
  }
  Scratch scratch_;
};

TEST_F(ServeApprovals, AnswersMapRightAndASessionAnswerCoversTheNextCommands) {
  Serve serve(scratch_, {}, network_);
  std::vector<json> seen;
  // allow-once, then deny: each answer does what it says.
  for (const std::string choice : {"allow-once", "deny"}) {
    const std::string command = status_of("asked.test", "/" + choice);
    serve.send(exec(choice, command, scratch_.ws));
    const json ask = next_question(serve, seen);
    ASSERT_FALSE(ask.is_null());
    EXPECT_EQ(ask["title"], "Sandbox approval required: connect asked.test:80");
    EXPECT_EQ(ask["request"]["command"], command);
    EXPECT_EQ(ask["request"]["destination"], "asked.test:80");
    EXPECT_EQ(ask["choices"], kNetworkChoices);
    EXPECT_FALSE(ask.contains("expires_in_s"));
    serve.send(answer(choice, ask["request_id"], choice));
    const auto events = serve.until_exit(choice);
    EXPECT_EQ(streams(events).first, choice == "deny" ? "403\n" : "200\n");
  }
  // allow-session: this command and every later one reach asked.test:80 without a question,
  // whatever its command line or scope.
  serve.send(exec("s1", status_of("asked.test"), scratch_.ws));
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  serve.send(answer("s1", ask["request_id"], "allow-session"));
  EXPECT_EQ(streams(serve.until_exit("s1")).first, "200\n");
  json second =
      exec("s2", status_of("asked.test", "/a") + "; " + status_of("asked.test", "/b"), scratch_.ws);
  second["scope_key"] = "another-turn";
  serve.send(second);
  const auto events = serve.until_exit("s2");
  EXPECT_TRUE(of_type(events, "approval_request").empty()) << json(events).dump();
  EXPECT_EQ(streams(events).first, "200\n200\n");
  // Another destination is still asked about.
  serve.send(exec("s3", status_of("other.test"), scratch_.ws));
  const json other = next_question(serve, seen);
  ASSERT_FALSE(other.is_null());
  EXPECT_EQ(other["request"]["destination"], "other.test:80");
}

TEST_F(ServeApprovals, TheBreakerOfAScopeKeyTripsAcrossCommands) {
  // A real reviewer program outside the workspace that denies and notes each call.
  const fs::path reviewer = scratch_.root / "deny.sh";
  const fs::path calls = scratch_.root / "reviewed";
  write_file(reviewer, "#!/bin/sh\ncat >/dev/null\necho call >> " + calls.string() +
                           "\necho '{\"outcome\":\"deny\",\"risk_level\":\"high\","
                           "\"rationale\":\"Unknown host, says the reviewer.\"}'\n");
  ::chmod(reviewer.c_str(), 0755);
  Serve serve(scratch_, {"--reviewer", reviewer.string()}, network_);
  std::vector<std::pair<std::string, std::string>> denied;  // reason, source
  std::string errors;
  for (int i = 0; i < 5; ++i) {
    const std::string id = "t" + std::to_string(i);
    json request = exec(id, status_of("asked.test") + "; " + status_of("other.test"), scratch_.ws);
    request["scope_key"] = "session-1:turn:1";
    serve.send(request);
    const auto events = serve.until_exit(id);
    EXPECT_TRUE(of_type(events, "approval_request").empty());
    EXPECT_EQ(streams(events).first, "403\n403\n");
    errors += streams(events).second;
    for (const auto& e : of_type(events, "denied")) denied.emplace_back(e["reason"], e["source"]);
  }
  // 3 denials in a row trip the scope's breaker (compatibility C75): the reviewer is asked
  // three times over the first two commands, never again in this scope.
  EXPECT_EQ(read_file(calls), "call\ncall\ncall\n");
  const std::pair<std::string, std::string> by_reviewer{"Unknown host, says the reviewer.",
                                                        "reviewer"};
  const std::pair<std::string, std::string> by_breaker{
      "Automatic review stopped after repeated denials in this turn.", "reviewer"};
  std::vector<std::pair<std::string, std::string>> expected(3, by_reviewer);
  expected.resize(10, by_breaker);
  EXPECT_EQ(denied, expected);
  // The reviewer's rationale reaches the command's output unchanged.
  EXPECT_NE(errors.find("pi-sandbox: network: refused asked.test:80: Unknown host, says the "
                        "reviewer.\npi-sandbox: network: refused other.test:80: Unknown host, says "
                        "the reviewer.\n"),
            std::string::npos)
      << errors;
  // Another scope is reviewed as usual.
  json request = exec("u", status_of("asked.test"), scratch_.ws);
  request["scope_key"] = "session-1:turn:2";
  serve.send(request);
  const auto events = serve.until_exit("u");
  EXPECT_EQ(read_file(calls), "call\ncall\ncall\ncall\n");
  ASSERT_EQ(of_type(events, "denied").size(), 1u);
  EXPECT_EQ(of_type(events, "denied")[0]["reason"], "Unknown host, says the reviewer.");
}

TEST_F(ServeApprovals, ConnectionsOfOneCommandShareOneQuestion) {
  Serve serve(scratch_, {}, network_);
  // Two connections at once to the same destination (npm's second connection).
  const std::string command = status_of("asked.test") + " & " + status_of("asked.test") + "; wait";
  serve.send(exec("c", command, scratch_.ws));
  std::vector<json> seen;
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  std::this_thread::sleep_for(300ms);  // both connections are waiting by then
  serve.send(answer("c", ask["request_id"], "allow-command"));
  const auto events = serve.until_exit("c");
  EXPECT_TRUE(of_type(events, "approval_request").empty()) << json(events).dump();
  EXPECT_EQ(streams(events).first, "200\n200\n");
}

TEST_F(ServeApprovals, ASessionAnswerSettlesTheOpenQuestionsOfOtherCommands) {
  Serve serve(scratch_, {}, network_);
  serve.send(exec("first", status_of("asked.test", "/first"), scratch_.ws));
  json waiting = exec("second", status_of("asked.test", "/second") + "; read line", scratch_.ws);
  waiting["stdin"] = "pipe";
  serve.send(waiting);
  std::map<std::string, json> asks;
  std::vector<json> seen;
  while (asks.size() < 2) {
    const json ask = next_question(serve, seen);
    ASSERT_FALSE(ask.is_null());
    asks[ask["id"]] = ask;
  }
  serve.send(answer("first", asks["first"]["request_id"], "allow-session"));
  std::vector<json> second_events;
  const auto first_events = serve.until_exit("first", &second_events);
  EXPECT_EQ(streams(first_events).first, "200\n");
  // The second command's question is settled without an answer of the host's (perhaps
  // before the first command's exit).
  const auto settled_seen = [&] { return !of_type(second_events, "approval_settled").empty(); };
  for (json e; !settled_seen() && !(e = serve.next()).is_null();) second_events.push_back(e);
  ASSERT_TRUE(settled_seen());
  const json settled = of_type(second_events, "approval_settled")[0];
  EXPECT_EQ(settled, (json{{"type", "approval_settled"},
                           {"id", "second"},
                           {"request_id", asks["second"]["request_id"]},
                           {"choice", "allow-session"},
                           {"source", "human"},
                           {"reason", "Allowed by the user for this session."}}));
  // A late answer to it is an unknown request_id.
  serve.send(answer("second", asks["second"]["request_id"], "deny"));
  for (json e = serve.next(); !e.is_null(); e = serve.next()) {
    second_events.push_back(e);
    if (e["type"] == "error") {
      EXPECT_EQ(e["message"], "approval_response: unknown request_id \"" +
                                  asks["second"]["request_id"].get<std::string>() + "\"");
      break;
    }
  }
  serve.send({{"type", "stdin_close"}, {"id", "second"}});
  const auto rest = serve.until_exit("second");
  second_events.insert(second_events.end(), rest.begin(), rest.end());
  EXPECT_EQ(streams(second_events).first, "200\n");
  EXPECT_TRUE(of_type(second_events, "denied").empty());
}

TEST_F(ServeApprovals, AQuestionWhoseDeadlinePassesIsSettledAndRefused) {
  Serve serve(scratch_, {"--config", config(R"({"approval": {"questionTimeoutSeconds": 1}})")},
              network_);
  serve.send(exec("late", status_of("asked.test"), scratch_.ws));
  std::vector<json> seen;
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  EXPECT_EQ(ask["expires_in_s"], 1);
  const auto events = serve.until_exit("late");
  const std::string reason = "Nobody answered the question within 1 s.";
  EXPECT_EQ(of_type(events, "approval_settled"),
            (std::vector<json>{json{{"type", "approval_settled"},
                                    {"id", "late"},
                                    {"request_id", ask["request_id"]},
                                    {"choice", "deny"},
                                    {"source", "unavailable"},
                                    {"reason", reason}}}));
  EXPECT_EQ(of_type(events, "denied"), (std::vector<json>{json{{"type", "denied"},
                                                               {"id", "late"},
                                                               {"surface", "network"},
                                                               {"target", "asked.test:80"},
                                                               {"reason", reason},
                                                               {"source", "unavailable"}}}));
  EXPECT_EQ(streams(events),
            std::make_pair(std::string("403\n"),
                           "pi-sandbox: network: refused asked.test:80: " + reason + "\n"));
}

TEST_F(ServeApprovals, ADeniedDomainsReasonIsInTheDeniedEventAndTheRefusalLine) {
  Serve serve(scratch_,
              {"--config", config(R"({"network": {"deniedDomains": ["asked.test"],)"
                                  R"( "deniedDomainReasons": {"asked.test": "use the mirror"}}})")},
              network_);
  serve.send(exec("d", status_of("asked.test"), scratch_.ws));
  const auto events = serve.until_exit("d");
  const std::string reason = "matches network.deniedDomains entry asked.test: use the mirror";
  EXPECT_TRUE(of_type(events, "approval_request").empty());
  EXPECT_EQ(of_type(events, "denied"), (std::vector<json>{json{{"type", "denied"},
                                                               {"id", "d"},
                                                               {"surface", "network"},
                                                               {"target", "asked.test:80"},
                                                               {"reason", reason},
                                                               {"source", "policy"}}}));
  EXPECT_EQ(streams(events),
            std::make_pair(std::string("403\n"),
                           "pi-sandbox: network: refused asked.test:80: " + reason + "\n"));
}

TEST_F(ServeApprovals, AfterAWrongDenialTheUserGetsOneRetryThatTheReviewerSeesAsTheirWord) {
  // A real reviewer that denies unless the request carries the user's word for a retry.
  const fs::path reviewer = scratch_.root / "retry.sh";
  write_file(reviewer,
             "#!/bin/sh\nif grep -q '\"userRetry\":true'; then\n"
             "echo '{\"outcome\":\"allow\",\"risk_level\":\"low\",\"rationale\":\"The user "
             "vouches.\"}'\nelse\n"
             "echo '{\"outcome\":\"deny\",\"risk_level\":\"medium\",\"rationale\":\"Unknown "
             "host.\"}'\nfi\n");
  ::chmod(reviewer.c_str(), 0755);
  Serve serve(scratch_, {"--reviewer", reviewer.string()}, network_);
  const std::string command = status_of("asked.test");
  serve.send(exec("first", command, scratch_.ws));
  EXPECT_EQ(streams(serve.until_exit("first")).first, "403\n");
  // An override of a hash that was never denied is refused.
  serve.send(json{{"type", "override"}, {"request_hash", std::string(64, '0')}, {"kind", "retry"}});
  EXPECT_EQ(serve.next(),
            (json{{"type", "error"},
                  {"message", "override: no recent automatic denial has request_hash " +
                                  std::string(64, '0')}}));
  serve.send(json{{"type", "recent_denials"}});
  const json recent = serve.next();
  ASSERT_EQ(recent["type"], "recent_denials") << recent;
  ASSERT_EQ(recent["denials"].size(), 1u) << recent;
  const json denial = recent["denials"][0];
  EXPECT_EQ(denial["recovery"], "retry");
  EXPECT_EQ(denial["surface"], "network");
  EXPECT_EQ(denial["target"], "asked.test:80");
  EXPECT_EQ(denial["reason"], "Unknown host.");
  EXPECT_EQ(denial["command"], command);
  const std::string hash = denial["request_hash"];
  EXPECT_EQ(hash.size(), 64u);
  // Break-glass is only for critical denials.
  serve.send(json{{"type", "override"}, {"request_hash", hash}, {"kind", "break-glass"}});
  EXPECT_EQ(serve.next()["message"],
            "override: the denial of " + hash + " was not critical: ask for a retry instead");
  serve.send(json{{"type", "override"}, {"request_hash", hash}, {"kind", "retry"}});
  EXPECT_EQ(
      serve.next(),
      (json{
          {"type", "override"}, {"request_hash", hash}, {"kind", "retry"}, {"expires_in_s", 60}}));
  serve.send(exec("retry", command, scratch_.ws));
  EXPECT_EQ(streams(serve.until_exit("retry")).first, "200\n");
  // One retry per session and hash; the next identical command is reviewed as before.
  serve.send(json{{"type", "override"}, {"request_hash", hash}, {"kind", "retry"}});
  EXPECT_EQ(serve.next()["message"],
            "override: a retry of " + hash + " was already authorised in this session");
  serve.send(exec("again", command, scratch_.ws));
  EXPECT_EQ(streams(serve.until_exit("again")).first, "403\n");
  // Denied again, the request is still listed once.
  serve.send(json{{"type", "recent_denials"}});
  const json listed = serve.next();
  ASSERT_EQ(listed["denials"].size(), 1u) << listed;
  EXPECT_EQ(listed["denials"][0], denial);
}

TEST_F(ServeApprovals, EachDeniedEventNamesTheWayOutOfItsDenial) {
  // A real reviewer that rates a connection to asked.test critical, any other an ordinary
  // denial.
  const fs::path reviewer = scratch_.root / "critical.sh";
  write_file(reviewer, R"(#!/bin/sh
if grep -q '"destination":"asked.test:80"'; then
  echo '{"outcome":"deny","risk_level":"critical","rationale":"Exfiltration."}'
else
  echo '{"outcome":"deny","risk_level":"medium","rationale":"Unknown host."}'
fi
)");
  ::chmod(reviewer.c_str(), 0755);
  Serve serve(scratch_, {"--reviewer", reviewer.string()}, network_);
  serve.send(exec("c", status_of("asked.test") + "; " + status_of("other.test"), scratch_.ws));
  const auto events = serve.until_exit("c");
  EXPECT_EQ(streams(events).first, "403\n403\n");
  EXPECT_EQ(of_type(events, "denied"), (std::vector<json>{json{{"type", "denied"},
                                                               {"id", "c"},
                                                               {"surface", "network"},
                                                               {"target", "asked.test:80"},
                                                               {"reason", "Exfiltration."},
                                                               {"source", "reviewer"},
                                                               {"recovery", "break-glass"}},
                                                          json{{"type", "denied"},
                                                               {"id", "c"},
                                                               {"surface", "network"},
                                                               {"target", "other.test:80"},
                                                               {"reason", "Unknown host."},
                                                               {"source", "reviewer"},
                                                               {"recovery", "retry"}}}));
  // A hard deny has no way out: the event names none.
  serve.send(exec("hard", "curl -k -s -o /dev/null http://other.test/", scratch_.ws));
  const auto hard = of_type(serve.until_exit("hard"), "denied");
  ASSERT_EQ(hard.size(), 1u);
  EXPECT_EQ(hard[0]["source"], "hard-deny");
  EXPECT_FALSE(hard[0].contains("recovery")) << hard[0];
}

TEST_F(ServeApprovals, TheCommandsTimeoutIsTheQuestionsDeadline) {
  Serve serve(scratch_, {}, network_);
  json request = exec("t", status_of("asked.test"), scratch_.ws);
  request["timeout_s"] = 30;
  serve.send(request);
  std::vector<json> seen;
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  ASSERT_TRUE(ask["expires_in_s"].is_number_integer()) << ask.dump();
  EXPECT_LE(ask["expires_in_s"].get<int>(), 30);
  EXPECT_GE(ask["expires_in_s"].get<int>(), 1);
  serve.send(answer("t", ask["request_id"], "allow-once"));
  EXPECT_EQ(streams(serve.until_exit("t")).first, "200\n");
}

TEST_F(ServeApprovals, AQuestionOpenWhenItsCommandEndsIsSettled) {
  Serve serve(scratch_, {}, network_);
  serve.send(exec("a", status_of("asked.test"), scratch_.ws));
  std::vector<json> seen;
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  serve.send({{"type", "abort"}, {"id", "a"}});
  const auto events = serve.until_exit("a");
  EXPECT_EQ(
      of_type(events, "approval_settled"),
      (std::vector<json>{json{{"type", "approval_settled"},
                              {"id", "a"},
                              {"request_id", ask["request_id"]},
                              {"choice", "deny"},
                              {"source", "unavailable"},
                              {"reason", "The command ended before the question was answered."}}}));
  EXPECT_EQ(events.back(), json::parse(R"({"type":"exit","id":"a","error":"aborted"})"));
  // The decision the command's end made is in the audit log, once.
  EXPECT_EQ(audit_lines_with(scratch_.home,
                             R"("reason":"The command ended before the question was answered.")"),
            1u);
}

TEST_F(ServeApprovals, EveryDenialCarriesItsSourceAndReasonEndToEnd) {
  Serve serve(scratch_, {}, network_);
  const std::string no_human =
      "Approval needs a human, and none could be asked (no terminal, prompting off, or "
      "cancelled).";
  struct Case {
    std::string id;
    std::optional<std::string> source, reason;
    std::string expected_source, expected_reason;
  };
  const std::vector<Case> cases = {
      {"human", std::nullopt, std::nullopt, "human", "Denied by the user."},
      {"human-why", "human", "Not during the demo.", "human", "Not during the demo."},
      {"nobody", "unavailable", std::nullopt, "unavailable", no_human},
      {"nobody-why", "unavailable", "Pi runs without a UI (--mode json).", "unavailable",
       "Pi runs without a UI (--mode json)."},
      {"broker", "reviewer", "pi-auto-review: not a registry this project uses.", "reviewer",
       "pi-auto-review: not a registry this project uses."},
  };
  for (const auto& c : cases) {
    serve.send(exec(c.id, status_of("asked.test"), scratch_.ws));
    std::vector<json> seen;
    const json ask = next_question(serve, seen);
    ASSERT_FALSE(ask.is_null());
    serve.send(answer(c.id, ask["request_id"], "deny", c.source, c.reason));
    const auto events = serve.until_exit(c.id);
    EXPECT_EQ(of_type(events, "denied"), (std::vector<json>{json{{"type", "denied"},
                                                                 {"id", c.id},
                                                                 {"surface", "network"},
                                                                 {"target", "asked.test:80"},
                                                                 {"reason", c.expected_reason},
                                                                 {"source", c.expected_source}}}))
        << c.id;
    EXPECT_EQ(streams(events),
              std::make_pair(std::string("403\n"), "pi-sandbox: network: refused asked.test:80: " +
                                                       c.expected_reason + "\n"))
        << c.id;
  }
}

TEST_F(ServeApprovals, AnswersThatCannotBeTakenLeaveTheQuestionOpen) {
  Serve serve(scratch_, {}, network_);
  serve.send(exec("c", status_of("asked.test"), scratch_.ws));
  std::vector<json> seen;
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  serve.send(answer("c", ask["request_id"], "allow-once", "unavailable"));
  EXPECT_EQ(serve.next(),
            (json{{"type", "error"},
                  {"message",
                   "approval_response \"c\": \"source\" must be \"human\" or \"reviewer\" for an "
                   "allow"},
                  {"id", "c"}}));
  serve.send(answer("c", ask["request_id"], "allow-once", "reviewer", "Known test host."));
  const auto events = serve.until_exit("c");
  EXPECT_EQ(streams(events).first, "200\n");
}

TEST_F(ServeApprovals, AHostIpcDenialSaysTheDecisionsReason) {
  // Reference items 55 and 61: the host-IPC denial reason is the reason the decision gave.
  Serve serve(scratch_, {"--config", config(R"({"hostIPC": {"mode": "ask",
                                                 "preflightCommandPrefixes": ["printf"]}})")},
              network_);
  const std::string command = "printf 'ran\\n'";
  serve.send(exec("h", command, scratch_.ws));
  std::vector<json> seen;
  const json ask = next_question(serve, seen);
  ASSERT_FALSE(ask.is_null());
  // allow-session is not offered for host IPC: refused, the question stays open.
  serve.send(answer("h", ask["request_id"], "allow-session"));
  EXPECT_EQ(serve.next()["message"],
            "approval_response \"h\": allow-session was not offered for "
            "request_id \"" +
                ask["request_id"].get<std::string>() + "\"");
  serve.send(answer("h", ask["request_id"], "deny", "reviewer", "Host IPC is off for this task."));
  const auto events = serve.until_exit("h");
  EXPECT_EQ(streams(events).second,
            "pi-sandbox: host-IPC execution denied: Host IPC is off for this task.\n");
  ASSERT_EQ(of_type(events, "denied").size(), 1u);
  EXPECT_EQ(of_type(events, "denied")[0]["source"], "reviewer");
  EXPECT_EQ(of_type(events, "denied")[0]["reason"], "Host IPC is off for this task.");
}

// ---- A sandbox made ahead (docs/ARCHITECTURE.md, "A sandbox made ahead") ----

/// Prints `pid1 <start>`: when pid 1 of the command's sandbox started (/proc/1/stat field 22,
/// proc(5): clock ticks since boot). The same as that of the sandbox serve kept ready
/// (ready_worker()) when the command ran in it: it is the same process.
constexpr const char* kPid1 = R"sh(echo "pid1 $(cut -d' ' -f22 /proc/1/stat)")sh";

/// The start of `pid` as kPid1 prints it.
std::string start_of(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.rfind(')') == std::string::npos) return "";  // it has ended
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) fields >> field;
  return "pid1 " + field + "\n";
}

/// `git init -q <dir>` on the host; its exit status.
int git_init(const fs::path& dir) {
  return std::system(("git init -q '" + dir.string() + "'").c_str());
}

/// The numbers in /proc/<pid>/task/<pid>/children.
std::vector<pid_t> children_of(pid_t pid) {
  std::istringstream in(
      read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
  std::vector<pid_t> out;
  for (pid_t child = 0; in >> child;) out.push_back(child);
  return out;
}

/// Whether `pid` is pid 1 of a pid namespace of its own: the last of its NSpid (proc(5)) is 1.
bool is_pid1(pid_t pid) {
  std::istringstream lines(read_file("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("NSpid:"))
      return std::ranges::count(line, '\t') > 1 && line.ends_with("\t1");
  return false;
}

/// The worker serve keeps waiting with a sandbox ready, and the start of that sandbox's pid 1
/// (start_of()), once there (within 20 s); {-1, ""} otherwise.
///   used: the start of a sandbox already used, whose worker may not have ended yet.
std::pair<pid_t, std::string> ready_worker(pid_t serve, const std::string& used = "") {
  for (int i = 0; i < 400; ++i) {
    for (const pid_t worker : children_of(serve)) {
      if (read_file("/proc/" + std::to_string(worker) + "/cmdline").find("--ready") ==
          std::string::npos)
        continue;
      // The worker's children: the sandbox's pid 1, and for a moment the child that records
      // what the sandbox's plans read (sandbox/linux/host_record.hpp), which is not one.
      std::vector<pid_t> pid1;
      for (const pid_t child : children_of(worker))
        if (is_pid1(child)) pid1.push_back(child);
      if (!pid1.empty() && start_of(pid1.front()) != used) {
        // A start time counts clock ticks (USER_HZ, 10 ms): a sandbox made for the next command
        // within the same tick would print the same one. Waiting past it makes a match mean the
        // same process.
        std::this_thread::sleep_for(30ms);
        return {worker, start_of(pid1.front())};
      }
    }
    std::this_thread::sleep_for(50ms);
  }
  return {-1, ""};
}

/// The stdout of command `id`, with its exit code appended (`|exit N`).
std::string stdout_of(Serve& serve, const std::string& id) {
  std::string out;
  for (const json& e : serve.until_exit(id)) {
    if (e["type"] == "output" && e.value("stream", "") == "stdout") out += decode(e);
    if (e["type"] == "exit") out += "|exit " + std::to_string(e.value("exit_code", -1));
  }
  return out;
}

/// Whether `out` holds the line of kPid1 for the sandbox made ahead that started at `start`.
bool made_ahead(const std::string& out, const std::string& start) {
  return !start.empty() && out.find(start) != std::string::npos;
}

/// `ls -A /tmp` inside, less pi-sandbox's own directory where the binary under test is staged
/// in /tmp (the sandbox binds pi-sandbox itself there so that `pi-sandbox proxy-connect` stays
/// runnable: docs/network.md).
std::string list_tmp() {
  const fs::path dir = fs::path(sandbox_binary()).parent_path();
  if (dir.parent_path() != "/tmp") return "ls -A /tmp";
  return "ls -A /tmp | grep -vxF '" + dir.filename().string() + "'";
}

// Each command gets a sandbox of its own even when it was made before the command came:
// nothing of the one before (a /tmp file, a process, an abstract socket) is in it.
TEST(ServeReady, ConsecutiveCommandsShareNothing) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send(exec("first",
                  "echo secret > /tmp/left; sleep 614 & "
                  "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); "
                  "s.bind('\\0pi-ready-left'); s.listen()\"; echo done",
                  scratch.ws));
  EXPECT_EQ(stdout_of(serve, "first"), "done\n|exit 0");
  auto [worker, start] = ready_worker(serve.pid());
  ASSERT_NE(worker, -1);
  for (const std::string id : {"second", "third"}) {
    serve.send(
        exec(id,
             list_tmp() +
                 "; ps -eo comm= | grep -c -e sleep -e python3; "
                 "grep -c pi-ready-left /proc/net/unix; echo secret2 > /tmp/left; sleep 614 & "
                 "true; " +
                 std::string(kPid1),
             scratch.ws));
    const std::string out = stdout_of(serve, id);
    EXPECT_TRUE(out.starts_with("0\n0\n")) << out;
    EXPECT_TRUE(made_ahead(out, start)) << out;
    EXPECT_TRUE(out.ends_with("|exit 0")) << out;
    std::tie(worker, start) = ready_worker(serve.pid(), start);
    ASSERT_NE(worker, -1);
  }
}

// Two commands at once, one in the sandbox made ahead, one in a sandbox made for it: neither
// sees the other's /tmp or processes.
TEST(ServeReady, ConcurrentCommandsShareNothing) {
  Scratch scratch;
  Serve serve(scratch);
  serve.send(exec("warm", "true", scratch.ws));
  EXPECT_EQ(stdout_of(serve, "warm"), "|exit 0");
  const auto [worker, start] = ready_worker(serve.pid());
  ASSERT_NE(worker, -1);
  serve.send(exec("a",
                  "echo a > /tmp/mine; sleep 614 & touch a-ready; "
                  "while [ ! -e b-done ]; do sleep 0.05; done; cat /tmp/mine; " +
                      std::string(kPid1),
                  scratch.ws));
  serve.send(exec("b",
                  "while [ ! -e a-ready ]; do sleep 0.05; done; " + list_tmp() +
                      "; "
                      "ps -eo args= | grep -cx 'sleep 614'; touch b-done; " +
                      std::string(kPid1),
                  scratch.ws));
  std::vector<json> others;
  std::string a, b;
  for (const json& e : serve.until_exit("a", &others))
    if (e["type"] == "output") a += decode(e);
  for (const json& e : others)
    if (e["type"] == "output" && e["id"] == "b") b += decode(e);
  if (std::ranges::none_of(others, [](const json& e) { return e["type"] == "exit"; }))
    b += stdout_of(serve, "b");
  EXPECT_TRUE(a.starts_with("a\n")) << a;
  EXPECT_TRUE(made_ahead(a, start)) << a;
  // Nothing in b's /tmp, and no `sleep 614` (a's) among b's processes.
  EXPECT_TRUE(b.starts_with("0\n")) << b;
  EXPECT_FALSE(made_ahead(b, start)) << b;
}

// The command's process made ahead (forked and confined before the command came) is confined
// as one forked for the command: no_new_privs, the seccomp filter, no capabilities, Landlock
// (no write outside the workspace), the command's directory and stdin; byte for byte what a
// sandbox made for the command shows.
TEST(ServeReady, TheCommandsProcessMadeAheadIsConfinedAsAnyOther) {
  Scratch scratch;
  fs::create_directories(scratch.ws / "sub");
  Serve serve(scratch);
  const std::string probe =
      "grep -E '^(NoNewPrivs|Seccomp|CapInh|CapPrm|CapEff|CapBnd|CapAmb):' /proc/self/status; "
      "touch /etc/pi-ahead 2>/dev/null; echo etc $?; touch " +
      (scratch.root / "pi-ahead").string() + " 2>/dev/null; echo root $?; pwd; cat; ";
  json first = exec("first", probe, scratch.ws / "sub");
  first["stdin"] = "pipe";
  serve.send(first);
  serve.send({{"type", "stdin"}, {"id", "first"}, {"data", "fed\n"}});
  serve.send({{"type", "stdin_close"}, {"id", "first"}});
  const std::string fresh = stdout_of(serve, "first");
  EXPECT_TRUE(fresh.find("NoNewPrivs:\t1\nSeccomp:\t2\n") != std::string::npos) << fresh;
  EXPECT_TRUE(fresh.ends_with("etc 1\nroot 1\n" + (scratch.ws / "sub").string() + "\nfed\n|exit 0"))
      << fresh;
  const auto [worker, start] = ready_worker(serve.pid());
  ASSERT_NE(worker, -1);
  json second = exec("second", probe + kPid1, scratch.ws / "sub");
  second["stdin"] = "pipe";
  serve.send(second);
  serve.send({{"type", "stdin"}, {"id", "second"}, {"data", "fed\n"}});
  serve.send({{"type", "stdin_close"}, {"id", "second"}});
  const std::string ahead = stdout_of(serve, "second");
  EXPECT_TRUE(made_ahead(ahead, start)) << ahead;
  EXPECT_EQ(ahead.substr(0, ahead.find("pid1 ")) + "|exit 0", fresh);
  EXPECT_FALSE(fs::exists(scratch.root / "pi-ahead"));
}

/// Runs `first`, waits for the sandbox made ahead, calls `change`, then runs `second` with
/// kPid1; its stdout (with `|exit N`), and whether it ran in the sandbox made ahead.
std::pair<std::string, bool> after_change(Serve& serve, const Scratch& scratch,
                                          const std::function<void()>& change,
                                          const std::string& second) {
  serve.send(exec("first", "true", scratch.ws));
  EXPECT_EQ(stdout_of(serve, "first"), "|exit 0");
  const auto [worker, start] = ready_worker(serve.pid());
  EXPECT_NE(worker, -1);
  change();
  serve.send(exec("second", second + "; " + kPid1, scratch.ws));
  const std::string out = stdout_of(serve, "second");
  return {out, made_ahead(out, start)};
}

/// An empty configuration `<root>/config.json` (returned) and `~/notes.txt` ("re-exposed") in the
/// hidden home.
fs::path empty_config_and_notes(const Scratch& scratch) {
  const fs::path config = scratch.root / "config.json";
  write_file(config, "{}");
  write_file(scratch.home / "notes.txt", "re-exposed\n");
  return config;
}

/// The configuration `config` changed to re-expose `~/notes.txt` (filesystem.additionalAllowRead).
void re_expose_notes(const Scratch& scratch, const fs::path& config) {
  write_file(config, R"({"filesystem": {"additionalAllowRead": [")" +
                         (scratch.home / "notes.txt").string() + R"("]}})");
}

// The command is handed over to the sandbox made ahead while its record is compared, and waits
// at a gate before its execve(2): when the record does not hold, that sandbox is killed with
// nothing of the command run, and the command runs once, in a sandbox made for it. The
// configuration's change is the same as in the test below; `ran` gets one line, and a guarded
// name made on the host before the command (the old plan guards `.mcp.json`) stays where the
// user put it.
TEST(ServeReady, AStaleSandboxNeverRunsTheCommandHandedOverToIt) {
  Scratch scratch;
  const fs::path config = empty_config_and_notes(scratch);
  Serve serve(scratch, {"--config", config.string()});
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        re_expose_notes(scratch, config);
        write_file(scratch.ws / ".mcp.json", "host\n");
      },
      "echo once >> ran; cat " + (scratch.home / "notes.txt").string());
  EXPECT_TRUE(out.starts_with("re-exposed\n")) << out;
  EXPECT_FALSE(ahead) << out;
  EXPECT_EQ(read_file(scratch.ws / "ran"), "once\n");
  EXPECT_EQ(read_file(scratch.ws / ".mcp.json"), "host\n");
}

// A change the record sees but that changes neither the policy nor the plans (an ordinary file
// made in the workspace's root moves the directory's times): the second way, the plans computed
// again at the gate, finds them equal, and the command runs in the sandbox made ahead.
TEST(ServeReady, AChangeThatKeepsThePlansIsServedByTheSandboxMadeBefore) {
  Scratch scratch;
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch, [&] { write_file(scratch.ws / "notes.txt", "mine\n"); }, "cat notes.txt");
  EXPECT_TRUE(out.starts_with("mine\n")) << out;
  EXPECT_TRUE(ahead) << out;
}

// A sandbox made ahead whose plan no longer holds is thrown away, never used: the
// configuration changed (a path of the hidden home re-exposed).
TEST(ServeReady, AChangedConfigurationIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path config = empty_config_and_notes(scratch);
  Serve serve(scratch, {"--config", config.string()});
  const auto [out, ahead] = after_change(
      serve, scratch, [&] { re_expose_notes(scratch, config); },
      "cat " + (scratch.home / "notes.txt").string());
  EXPECT_TRUE(out.starts_with("re-exposed\n")) << out;
  EXPECT_FALSE(ahead) << out;
}

// A protected path that appeared after the sandbox was made (a nested repository's hooks).
TEST(ServeReady, AProtectedPathThatAppearedIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch, [&] { ASSERT_EQ(git_init(scratch.ws / "nested"), 0); },
      "echo evil > nested/.git/hooks/pre-commit; echo $?");
  EXPECT_TRUE(out.starts_with("1\n")) << out;
  EXPECT_FALSE(fs::exists(scratch.ws / "nested/.git/hooks/pre-commit"));
  EXPECT_FALSE(ahead) << out;
}

// The configuration replaced by rename (an editor's save): the new file is read, never the plan
// of the old one.
TEST(ServeReady, AConfigurationReplacedByRenameIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  write_file(config, "{}");
  write_file(scratch.home / "notes.txt", "re-exposed\n");
  Serve serve(scratch, {"--config", config.string()});
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        write_file(scratch.root / "config.json.new",
                   R"({"filesystem": {"additionalAllowRead": [")" +
                       (scratch.home / "notes.txt").string() + R"("]}})");
        fs::rename(scratch.root / "config.json.new", config);
      },
      "cat " + (scratch.home / "notes.txt").string());
  EXPECT_TRUE(out.starts_with("re-exposed\n")) << out;
  EXPECT_FALSE(ahead) << out;
}

// A protected name created in a directory the scan had read (the workspace's root) after the
// sandbox was made: it is bound read-only for the command, never left writable.
TEST(ServeReady, AProtectedNameCreatedInAScannedDirectoryIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch, [&] { write_file(scratch.ws / ".mcp.json", "host\n"); },
      "echo evil >> .mcp.json; echo $?");
  EXPECT_TRUE(out.starts_with("1\n")) << out;
  EXPECT_EQ(read_file(scratch.ws / ".mcp.json"), "host\n");
  EXPECT_FALSE(ahead) << out;
}

// A protected path that went after the sandbox was made (the nested repository removed).
TEST(ServeReady, AProtectedPathThatWentIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  ASSERT_EQ(git_init(scratch.ws / "nested"), 0);
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch, [&] { fs::remove_all(scratch.ws / "nested"); }, "ls -A");
  EXPECT_FALSE(ahead) << out;
  EXPECT_TRUE(out.ends_with("|exit 0")) << out;
}

// A protected file the host replaced (an editor's save by rename): the command reads the new
// one, never the one the sandbox made before had bound read-only.
TEST(ServeReady, AReplacedProtectedFileIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  write_file(scratch.ws / ".mcp.json", "old\n");
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        write_file(scratch.ws / ".mcp.json.new", "new\n");
        fs::rename(scratch.ws / ".mcp.json.new", scratch.ws / ".mcp.json");
      },
      "cat .mcp.json; echo more >> .mcp.json; echo $?");
  EXPECT_TRUE(out.starts_with("new\n1\n")) << out;
  EXPECT_EQ(read_file(scratch.ws / ".mcp.json"), "new\n");
  EXPECT_FALSE(ahead) << out;
}

// A credential inside a re-exposed directory that the host replaced (a tool's refresh by
// rename): still concealed, never visible through the sandbox made before.
TEST(ServeReady, AReplacedCredentialIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path aws = scratch.home / ".aws";
  fs::create_directories(aws);
  write_file(aws / "credentials", "old-secret\n");
  write_file(aws / "config", "[default]\n");
  const fs::path config = scratch.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowRead": [")" + aws.string() + R"("]}})");
  Serve serve(scratch, {"--config", config.string()});
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        write_file(aws / "credentials.new", "new-secret\n");
        fs::rename(aws / "credentials.new", aws / "credentials");
      },
      "cat " + (aws / "config").string() + " " + (aws / "credentials").string());
  EXPECT_TRUE(out.starts_with("[default]\npid1 ")) << out;
  EXPECT_EQ(out.find("secret"), std::string::npos) << out;
  EXPECT_FALSE(ahead) << out;
}

// A credential that is a symlink to a file not made yet (a secret store that fills it when
// unlocked) inside a re-exposed directory: the name is in its directory all along, so that
// directory's times say nothing of the target made after the sandbox; the command must not
// read it through the sandbox made before, where it was not there to conceal.
TEST(ServeReady, ACredentialWhoseDanglingSymlinkGotATargetIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path aws = scratch.home / ".aws";
  fs::create_directories(aws / "store");
  fs::create_symlink("store/credentials", aws / "credentials");
  write_file(aws / "config", "[default]\n");
  const fs::path config = scratch.root / "config.json";
  write_file(config, R"({"filesystem": {"additionalAllowRead": [")" + aws.string() + R"("]}})");
  Serve serve(scratch, {"--config", config.string()});
  const auto [out, ahead] = after_change(
      serve, scratch, [&] { write_file(aws / "store" / "credentials", "new-secret\n"); },
      "cat " + (aws / "config").string() + " " + (aws / "credentials").string());
  EXPECT_TRUE(out.starts_with("[default]\n")) << out;
  EXPECT_EQ(out.find("secret"), std::string::npos) << out;
  EXPECT_FALSE(ahead) << out;
}

// The workspace moved away and made again at its path: the command writes to the new one.
TEST(ServeReady, AMovedWorkspaceIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  Serve serve(scratch);
  const fs::path old = scratch.root / "ws-old";
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        fs::rename(scratch.ws, old);
        fs::create_directory(scratch.ws);
      },
      "echo new > written");
  EXPECT_EQ(read_file(scratch.ws / "written"), "new\n");
  EXPECT_FALSE(fs::exists(old / "written"));
  EXPECT_FALSE(ahead) << out;
}

/// Runs `first` as after_change() does, each exec with `env` as its environment.
std::pair<std::string, bool> after_change_with(Serve& serve, const Scratch& scratch,
                                               const json& env, const std::function<void()>& change,
                                               const std::string& second, const json& second_env) {
  json first = exec("first", "true", scratch.ws);
  first["env"] = env;
  serve.send(first);
  EXPECT_EQ(stdout_of(serve, "first"), "|exit 0");
  const auto [worker, start] = ready_worker(serve.pid());
  EXPECT_NE(worker, -1);
  change();
  json next = exec("second", second + "; " + kPid1, scratch.ws);
  next["env"] = second_env;
  serve.send(next);
  const std::string out = stdout_of(serve, "second");
  return {out, made_ahead(out, start)};
}

/// Scratch::env() with PATH: `dirs` then /usr/bin and /bin.
json env_with_path(const Scratch& scratch, const std::string& dirs) {
  json env = scratch.env();
  env["PATH"] = dirs + "/usr/bin:/bin";
  return env;
}

// The configuration edited in place to a text of the same size, its modification time put back
// to the nanosecond (what an editor that keeps times, or a tool within one clock tick, leaves):
// only its change time tells, and the sandbox made before is never used.
TEST(ServeReady, AConfigurationEditedKeepingSizeAndTimeIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  const auto allow = [&](const std::string& name) {
    return R"({"filesystem": {"additionalAllowRead": [")" + (scratch.home / name).string() +
           R"("]}})";
  };
  write_file(config, allow("notez.txt"));
  write_file(scratch.home / "notes.txt", "re-exposed\n");
  Serve serve(scratch, {"--config", config.string()});
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        struct stat before {};
        ASSERT_EQ(::stat(config.c_str(), &before), 0);
        write_file(config, allow("notes.txt"));
        const timespec times[2] = {before.st_atim, before.st_mtim};
        ASSERT_EQ(::utimensat(AT_FDCWD, config.c_str(), times, 0), 0);
        struct stat after {};
        ASSERT_EQ(::stat(config.c_str(), &after), 0);
        ASSERT_EQ(after.st_size, before.st_size);
        ASSERT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
      },
      "cat " + (scratch.home / "notes.txt").string());
  EXPECT_TRUE(out.starts_with("re-exposed\n")) << out;
  EXPECT_FALSE(ahead) << out;
}

// The configuration edited through a shared mapping whose page was already dirty (mmap(2)):
// the kernel moves no time for such a write (inode(7): the times move at the first write fault
// of a clean page), so the stat tuple is as the record saw it and only the content tells. The
// read-only grant withdrawn, the sandbox made before must not keep it.
TEST(ServeReady, AConfigurationEditedThroughADirtyMappingIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  const auto allow = [&](const std::string& name) {
    return R"({"filesystem": {"additionalAllowRead": [")" + (scratch.home / name).string() +
           R"("]}})";
  };
  const std::string before = allow("notes.txt");
  const std::string after = allow("notez.txt");
  write_file(config, before);
  write_file(scratch.home / "notes.txt", "re-exposed\n");
  const int fd = ::open(config.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  void* map = ::mmap(nullptr, before.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  auto* bytes = static_cast<char*>(map);
  bytes[0] = before[0];  // the page dirty, its times moved once, long before the record
  std::this_thread::sleep_for(100ms);
  Serve serve(scratch, {"--config", config.string()});
  struct stat was {};
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] {
        ASSERT_EQ(::stat(config.c_str(), &was), 0);
        std::memcpy(bytes, after.data(), after.size());
      },
      "cat " + (scratch.home / "notes.txt").string());
  struct stat now {};
  ASSERT_EQ(::stat(config.c_str(), &now), 0);
  ::munmap(map, before.size());
  // The premise: the edit moved nothing stat(2) shows (else this is another test).
  EXPECT_EQ(now.st_ctim.tv_nsec, was.st_ctim.tv_nsec);
  EXPECT_EQ(now.st_mtim.tv_nsec, was.st_mtim.tv_nsec);
  EXPECT_EQ(read_file(config), after);
  EXPECT_EQ(out.find("re-exposed"), std::string::npos) << out;
  EXPECT_FALSE(ahead) << out;
}

// The configuration at its default location a symbolic link (docs/configuration.md, "Where":
// "keep it a file of its own, or a symbolic link") to a file made only after the sandbox was
// (a dotfile manager's checkout): the link's name was in its directory all along, so no time
// of that directory moved. The configuration now hides the home's toolchains; the command must
// not see them through the sandbox made before.
TEST(ServeReady, AConfigurationLinkWhoseTargetAppearedIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path tools = scratch.home / "tools" / "bin";
  fs::create_directories(tools);
  write_file(tools / "tool", "exposed\n");
  const fs::path dotfiles = scratch.home / "dotfiles";
  fs::create_directories(dotfiles);
  const fs::path agent = scratch.home / ".pi" / "agent" / "extensions" / "pi-sandbox";
  fs::create_directories(agent);
  fs::create_symlink(dotfiles / "pi-sandbox.json", agent / "config.json");
  const json env = env_with_path(scratch, tools.string() + ":");
  Serve serve(scratch);
  const auto [out, ahead] = after_change_with(
      serve, scratch, env,
      [&] {
        write_file(dotfiles / "pi-sandbox.json",
                   R"({"filesystem": {"exposeHomeToolchains": false}})");
      },
      "cat " + (tools / "tool").string(), env);
  EXPECT_EQ(out.find("exposed"), std::string::npos) << out;
  EXPECT_FALSE(ahead) << out;
}

// The user's git configuration a symbolic link (a dotfile manager's) to a file made only after
// the sandbox was: the link's name was in its directory all along, so no time of that
// directory moved. The file now sets core.hooksPath to a directory of the workspace, which is
// then protected (docs/security.md, "Hooks where git looks for them"): the command must not
// plant a hook there through the sandbox made before.
TEST(ServeReady, AGitConfigurationLinkWhoseTargetAppearedIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  ASSERT_EQ(git_init(scratch.ws), 0);
  fs::create_directories(scratch.ws / ".githooks");
  const fs::path dotfiles = scratch.home / "dotfiles";
  fs::create_directories(dotfiles);
  fs::create_directories(scratch.home / ".config" / "git");
  fs::create_symlink(dotfiles / "gitconfig", scratch.home / ".config" / "git" / "config");
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch,
      [&] { write_file(dotfiles / "gitconfig", "[core]\n\thooksPath = .githooks\n"); },
      "echo evil > .githooks/pre-commit; echo $?");
  EXPECT_TRUE(out.starts_with("1\n")) << out;
  EXPECT_FALSE(fs::exists(scratch.ws / ".githooks" / "pre-commit"));
  EXPECT_FALSE(ahead) << out;
}

// A directory of the home that the policy re-exposes (a $PATH entry there: docs/security.md,
// "Toolchains in the home") made after the sandbox was: the command sees it.
TEST(ServeReady, AHomePathThePolicyExposesThatAppearedIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path tools = scratch.home / "tools" / "bin";
  const json env = env_with_path(scratch, tools.string() + ":");
  Serve serve(scratch);
  const auto [out, ahead] = after_change_with(
      serve, scratch, env,
      [&] {
        fs::create_directories(tools);
        write_file(tools / "tool", "exposed\n");
      },
      "cat " + (tools / "tool").string(), env);
  EXPECT_TRUE(out.starts_with("exposed\n")) << out;
  EXPECT_FALSE(ahead) << out;
}

// The same command with another environment, one that re-exposes a directory of the home
// (its $PATH): the sandbox made for the environment before is never used.
TEST(ServeReady, AnotherEnvironmentIsNeverServedByTheSandboxMadeBefore) {
  Scratch scratch;
  const fs::path tools = scratch.home / "tools" / "bin";
  fs::create_directories(tools);
  write_file(tools / "tool", "exposed\n");
  Serve serve(scratch);
  const auto [out, ahead] = after_change_with(
      serve, scratch, env_with_path(scratch, ""), [] {}, "cat " + (tools / "tool").string(),
      env_with_path(scratch, tools.string() + ":"));
  EXPECT_TRUE(out.starts_with("exposed\n")) << out;
  EXPECT_FALSE(ahead) << out;
}

/// Serves `true`, then, once the next sandbox is made ahead, replaces `<root>/<dir>` (a
/// directory outside the workspace) by a link to `<ws>/<dir>`, and runs `pi-tool` approved on
/// the host (hostIPC.mode ask) with $PATH `<root>/path/hostbin:<root>/path/sysbin:...` and
/// $BASH_ENV `<root>/bash/envdir/env.sh` (apart, so that only what reads `dir` can see it change).
/// `pi-tool` of sysbin prints "host tool"; the workspace's pi-tool and env.sh leave a file next to
/// `<root>/planted-ran-on-host`. Returns the host run's stdout and whether anything of the
/// workspace ran on the host.
std::pair<std::string, bool> host_run_after_link(const Scratch& scratch, const std::string& dir) {
  const fs::path marker = scratch.root / "planted-ran-on-host";
  const fs::path path = scratch.root / "path";
  const fs::path bash = scratch.root / "bash";
  for (const auto& made : {path / "hostbin", path / "sysbin", bash / "envdir",
                           scratch.ws / "path" / "hostbin", scratch.ws / "bash" / "envdir"})
    fs::create_directories(made);
  write_file(path / "sysbin" / "pi-tool", "#!/bin/sh\necho host tool\n");
  write_file(scratch.ws / "path" / "hostbin" / "pi-tool",
             "#!/bin/sh\ntouch " + marker.string() + ".tool\necho planted\n");
  ::chmod((path / "sysbin" / "pi-tool").c_str(), 0755);
  ::chmod((scratch.ws / "path" / "hostbin" / "pi-tool").c_str(), 0755);
  write_file(bash / "envdir" / "env.sh", "true\n");
  write_file(scratch.ws / "bash" / "envdir" / "env.sh", "touch " + marker.string() + ".bash_env\n");
  const fs::path config = scratch.root / "config.json";
  write_file(config, R"({"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["pi-tool"]}})");
  Serve serve(scratch, {"--config", config.string()});
  json env =
      env_with_path(scratch, (path / "hostbin").string() + ":" + (path / "sysbin").string() + ":");
  env["BASH_ENV"] = (bash / "envdir" / "env.sh").string();
  json first = exec("first", "true", scratch.ws);
  first["env"] = env;
  serve.send(first);
  EXPECT_EQ(stdout_of(serve, "first"), "|exit 0");
  EXPECT_NE(ready_worker(serve.pid()).first, -1);
  fs::remove_all(scratch.root / dir);
  fs::create_directory_symlink(scratch.ws / dir, scratch.root / dir);
  json second = exec("second", "pi-tool", scratch.ws);
  second["env"] = env;
  serve.send(second);
  EXPECT_EQ(serve.next()["type"], "started");
  const json ask = serve.next();
  EXPECT_EQ(ask["type"], "approval_request") << ask.dump();
  serve.send({{"type", "approval_response"},
              {"id", "second"},
              {"request_id", ask["request_id"]},
              {"choice", "allow-once"}});
  const auto events = serve.until_exit("second");
  return {streams(events).first,
          fs::exists(marker.string() + ".tool") || fs::exists(marker.string() + ".bash_env")};
}

// What the command starts on the host (an approved host-IPC run) gets the environment of the
// host as the command finds it, also when the policy and the plans of the sandbox made ahead
// still hold (docs/security.md, "A sandbox made ahead"): a $PATH directory outside the
// workspace replaced by a link into it after that sandbox was made is dropped from the host
// run's $PATH, and the workspace's `pi-tool` never runs on the host.
TEST(ServeReady, APathDirectoryThatBecameALinkIntoTheWorkspaceIsNeverKeptForTheHostRun) {
  Scratch scratch;
  const auto [out, planted_ran] = host_run_after_link(scratch, "path/hostbin");
  EXPECT_EQ(out, "host tool\n");
  EXPECT_FALSE(planted_ran);
}

// The same for a variable the policy itself never reads: $BASH_ENV, which bash sources before
// the host run's command, in a directory that became a link into the workspace.
TEST(ServeReady, ABashEnvDirectoryThatBecameALinkIntoTheWorkspaceIsNeverKeptForTheHostRun) {
  Scratch scratch;
  const auto [out, planted_ran] = host_run_after_link(scratch, "bash/envdir");
  EXPECT_EQ(out, "host tool\n");
  EXPECT_FALSE(planted_ran);
}

// A reviewer refused for the host environment made with the sandbox ahead (its interpreter found
// only through a $PATH link into the workspace, which that environment drops) is not refused once
// the user has made the link a directory of the host again: the host environment is taken as
// the command finds it.
TEST(ServeReady, AReviewerFoundAgainOnTheHostIsNotRefusedForTheEnvironmentMadeBefore) {
  Scratch scratch;
  const fs::path hostbin = scratch.root / "path" / "hostbin";
  const std::string interpreter = "#!/bin/sh\nexec /bin/sh \"$@\"\n";
  fs::create_directories(hostbin.parent_path());
  fs::create_directories(scratch.ws / "hostbin");
  write_file(scratch.ws / "hostbin" / "pi-interp", interpreter);
  ::chmod((scratch.ws / "hostbin" / "pi-interp").c_str(), 0755);
  fs::create_directory_symlink(scratch.ws / "hostbin", hostbin);
  const fs::path reviewer = scratch.root / "review.sh";
  write_file(reviewer,
             "#!/usr/bin/env pi-interp\ncat >/dev/null\necho '{\"outcome\":\"allow\","
             "\"risk_level\":\"low\",\"rationale\":\"ok\"}'\n");
  ::chmod(reviewer.c_str(), 0755);
  Serve serve(scratch, {"--reviewer", reviewer.string()});
  const json env = env_with_path(scratch, hostbin.string() + ":");
  json first = exec("first", "echo ran", scratch.ws);
  first["env"] = env;
  serve.send(first);
  const json refused = serve.until_exit("first").back();
  EXPECT_EQ(refused["error"], "launch_failed") << refused.dump();
  EXPECT_TRUE(refused.value("message", "")
                  .starts_with("refusing the reviewer " + reviewer.string() +
                               ": its interpreter pi-interp (`#!/usr/bin/env pi-interp`) is not "
                               "found in the cleaned $PATH"))
      << refused.dump();
  ASSERT_NE(ready_worker(serve.pid()).first, -1);
  fs::remove(hostbin);
  fs::create_directories(hostbin);
  write_file(hostbin / "pi-interp", interpreter);
  ::chmod((hostbin / "pi-interp").c_str(), 0755);
  json second = exec("second", "echo ran", scratch.ws);
  second["env"] = env;
  serve.send(second);
  const auto events = serve.until_exit("second");
  EXPECT_EQ(streams(events), std::make_pair(std::string("ran\n"), std::string()));
  EXPECT_EQ(events.back()["exit_code"], 0);
}

// Host IPC switched on in the configuration after the sandbox was made ahead (with it off): the
// command, handed over to that sandbox and found stale at the gate, runs again the full way, and
// its question reaches the host as any other (it is not ended with the stale attempt).
TEST(ServeReady, HostIpcSwitchedOnAfterTheSandboxWasMadeAsksItsQuestion) {
  Scratch scratch;
  const fs::path config = scratch.root / "config.json";
  write_file(config, "{}");
  Serve serve(scratch, {"--config", config.string()});
  serve.send(exec("first", "true", scratch.ws));
  EXPECT_EQ(stdout_of(serve, "first"), "|exit 0");
  ASSERT_NE(ready_worker(serve.pid()).first, -1);
  write_file(config, R"({"hostIPC": {"mode": "ask", "preflightCommandPrefixes": ["printf"]}})");
  const std::string command = "printf 'ran on %s\\n' \"${PI_SANDBOX:-the host}\"";
  serve.send(exec("second", command, scratch.ws));
  EXPECT_EQ(serve.next()["type"], "started");
  const json ask = serve.next();
  ASSERT_EQ(ask["type"], "approval_request") << ask.dump();
  EXPECT_EQ(ask["request"]["surface"], "host-ipc");
  serve.send({{"type", "approval_response"},
              {"id", "second"},
              {"request_id", ask["request_id"]},
              {"choice", "allow-once"}});
  const auto events = serve.until_exit("second");
  EXPECT_EQ(streams(events), std::make_pair(std::string("ran on the host\n"), std::string()));
  EXPECT_EQ(events.back()["exit_code"], 0);
}

// Nothing changed: the command runs in the sandbox made ahead (the record holds), as the
// tests above would not show if it never did.
TEST(ServeReady, AnUnchangedHostIsServedByTheSandboxMadeBefore) {
  Scratch scratch;
  write_file(scratch.ws / ".mcp.json", "host\n");
  Serve serve(scratch);
  const auto [out, ahead] = after_change(
      serve, scratch, [] {}, "cat .mcp.json");
  EXPECT_TRUE(out.starts_with("host\n")) << out;
  EXPECT_TRUE(ahead) << out;
}

// A sandbox made ahead and never used goes with a killed serve: its worker and pid 1 end,
// its cgroup is removed, the workspace is as before.
TEST(ServeReady, AKilledServeLeavesNothingOfTheSandboxMadeAhead) {
  Scratch scratch;
  const auto before = list_dir(scratch.ws);
  Serve serve(scratch);
  serve.send(exec("first", "true", scratch.ws));
  EXPECT_EQ(stdout_of(serve, "first"), "|exit 0");
  const auto [worker, start] = ready_worker(serve.pid());
  ASSERT_NE(worker, -1);
  std::vector<pid_t> children = children_of(worker);
  std::erase_if(children, [](pid_t child) { return !is_pid1(child); });
  ASSERT_FALSE(children.empty());
  const pid_t pid1 = children.front();
  std::string cgroup;
  for (std::istringstream lines(read_file("/proc/" + std::to_string(pid1) + "/cgroup"));
       std::getline(lines, cgroup);)
    if (cgroup.find(":pids:") != std::string::npos || cgroup.starts_with("0::")) break;
  cgroup = cgroup.substr(cgroup.rfind(':') + 1);
  ::kill(serve.pid(), SIGKILL);
  serve.wait();
  for (int i = 0; i < 200 && (fs::exists("/proc/" + std::to_string(worker)) ||
                              fs::exists("/proc/" + std::to_string(pid1)));
       ++i)
    std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(worker)));
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(pid1)));
  if (has_cgroups() && cgroup.find("pi-sandbox") != std::string::npos) {
    const fs::path dir = fs::exists("/sys/fs/cgroup/pids") ? fs::path("/sys/fs/cgroup/pids")
                                                           : fs::path("/sys/fs/cgroup");
    EXPECT_FALSE(fs::exists(dir / fs::path(cgroup).relative_path())) << cgroup;
  }
  EXPECT_EQ(list_dir(scratch.ws), before);
}

}  // namespace
}  // namespace pisandbox::testing
