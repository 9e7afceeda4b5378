// git over HTTPS with the user's credentials, kept on the host (docs/network.md, "Credentials for
// HTTPS"): git.test and other.test on 203.0.113.2 in a test network (test_network.hpp) serve
// repositories through git-http-backend over HTTPS with a CA of their own, each asking for its own
// basic-auth credential. The host's git has `credential.helper store` with the credentials in
// ~/.git-credentials. Inside, git asks `pi-sandbox credential-helper`, which asks pi-sandbox on the
// host through the proxy; the reviewer program answers the `credential` question. The secret
// reaches git's request and nothing else: no event, no audit line, no file inside.
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "harness.hpp"
#include "test_network.hpp"

namespace pisandbox::testing {
namespace {

/// The secrets: a test looks for them in pieces so that its own command line never holds them.
const std::string kSecretA = "GIT-SECRET-A-5f1d2c";
const std::string kSecretB = "GIT-SECRET-B-9e7a41";

/// The handler of the HTTPS server (https_server_script()).
const char* const kHandler = R"PY(# git's smart HTTP over HTTPS: git-http-backend behind basic
# auth, one repository root and one credential per Host. Each request is a line in
# server.log: "<method> <host> <path> <auth-ok|auth-wrong|no-auth>".
import base64, http.server, os, subprocess, sys

ROOT = sys.argv[1]
USERS = {}
for line in open(os.path.join(ROOT, "users")):
    host, user, password = line.split()
    USERS[host] = "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()

class Handler(http.server.BaseHTTPRequestHandler):
    def serve(self):
        host = self.headers.get("Host", "").split(":")[0]
        auth = self.headers.get("Authorization")
        ok = host in USERS and auth == USERS[host]
        path, _, query = self.path.partition("?")
        with open(os.path.join(ROOT, "server.log"), "a") as log:
            log.write("%s %s %s %s\n" % (self.command, host, path,
                                         "auth-ok" if ok else "auth-wrong" if auth else "no-auth"))
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if not ok:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        env = {"GIT_PROJECT_ROOT": os.path.join(ROOT, "repos", host), "GIT_HTTP_EXPORT_ALL": "1",
               "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""),
               "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": "git",
               "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": ROOT}
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["/usr/lib/git-core/git-http-backend"], input=body, env=env,
                             capture_output=True).stdout
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(sep)
        status, headers = 200, []
        for line in head.decode().splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
    do_GET = do_POST = serve
    def log_message(self, *args):
        pass

)PY";

/// A bare repository `<root>/repos/<host>/repo.git` whose one commit holds README = `text`.
bool make_repository(const fs::path& root, const std::string& host, const std::string& text) {
  const std::string source = (root / ("src-" + host)).string();
  const std::string script =
      "set -e; git init -q -b main '" + source + "'; cd '" + source + "'; printf '" + text +
      "\\n' > README; git add README; git -c user.name=t -c user.email=t@t commit -qm one; "
      "mkdir -p '" +
      (root / "repos" / host).string() + "'; git clone -q --bare . '" +
      (root / "repos" / host / "repo.git").string() + "'";
  return run_process({"/bin/sh", "-c", script},
                     {{"GIT_CONFIG_NOSYSTEM", "1"}, {"HOME", root.string()}})
             .exit_code == 0;
}

/// A reviewer that records each request (one JSON object a line in `<dir>/requests`) and
/// answers `outcome` for a credential and `allow` for anything else.
void write_reviewer(const fs::path& path, const std::string& outcome) {
  write_file(
      path,
      "#!/bin/sh\nrequest=$(cat)\nprintf '%s\\n' \"$request\" >> \"$(dirname \"$0\")/requests\"\n"
      "case \"$request\" in\n*'\"surface\":\"credential\"'*) verdict=" +
          outcome +
          " ;;\n*) verdict=allow ;;\nesac\n"
          "printf '{\"outcome\":\"%s\",\"risk_level\":\"low\",\"rationale\":\"Reviewer said "
          "%s.\"}\\n' \"$verdict\" \"$verdict\"\n");
  ::chmod(path.c_str(), 0755);
}

class GitCredentials : public ::testing::Test {
 protected:
  void SetUp() override {
    PI_SANDBOX_REQUIRE(::access("/usr/bin/git", X_OK) == 0, "git is not installed");
    PI_SANDBOX_REQUIRE(::access("/usr/lib/git-core/git-http-backend", X_OK) == 0,
                       "git-http-backend is not installed");
    PI_SANDBOX_REQUIRE(::access("/usr/bin/openssl", X_OK) == 0, "openssl is not installed");
    PI_SANDBOX_REQUIRE(::access("/usr/sbin/ip", X_OK) == 0 || ::access("/sbin/ip", X_OK) == 0,
                       "iproute2 is not installed");
    ASSERT_TRUE(make_test_certificates(s_.root, {"git.test", "other.test"}));
    ASSERT_TRUE(make_repository(s_.root, "git.test", "repository of git.test"));
    ASSERT_TRUE(make_repository(s_.root, "other.test", "repository of other.test"));
    write_file(s_.root / "users",
               "git.test alice " + kSecretA + "\nother.test bob " + kSecretB + "\n");
    // The CA, where the command can read it (GIT_SSL_CAINFO names it).
    write_file(s_.ws / "ca.pem", read_file(s_.root / "ca.pem"));
    // The user's own helper on the host: git's `store`, with both credentials.
    write_file(s_.home / ".gitconfig", "[credential]\n\thelper = store\n");
    write_file(
        s_.home / ".git-credentials",
        "https://alice:" + kSecretA + "@git.test\nhttps://bob:" + kSecretB + "@other.test\n");
    ::chmod((s_.home / ".git-credentials").c_str(), 0600);
    reviewers_ = s_.root / "reviewers";
    fs::create_directories(reviewers_);
    write_reviewer(reviewers_ / "allow", "allow");
    write_reviewer(reviewers_ / "deny", "deny");
    PI_SANDBOX_REQUIRE(
        network_.start(s_.root, "203.0.113.2 git.test other.test\n", https_server_script(kHandler)),
        "could not build the test network (user+network namespaces, veth)");
  }

  /// `pi-sandbox run` in the test network with `allowed` as network.allowedDomains and the
  /// reviewer `reviewer`.
  RunResult run(const std::string& command, const std::string& allowed,
                const std::string& reviewer = "allow") const {
    write_file(s_.root / "config.json", R"({"network": {"allowedDomains": [)" + allowed + "]}}");
    auto env = TestNetwork::without_proxies(s_.env());
    env["GIT_SSL_CAINFO"] = (s_.ws / "ca.pem").string();
    return run_process(
        network_.inside({sandbox_binary(), "run", "--cwd", s_.ws.string(), "--config",
                         (s_.root / "config.json").string(), "--no-prompt", "--reviewer",
                         (reviewers_ / reviewer).string(), "-c", command}),
        env);
  }

  /// Shell lines that count, inside, the files of the home, the workspace and /tmp and the
  /// process environments holding either secret (the pattern is built in pieces).
  static std::string secrets_inside() {
    return "a=GIT-SECRET-; a=\"${a}A-5f1d2c\"; b=GIT-SECRET-; b=\"${b}B-9e7a41\"\n"
           "grep -rlas -e \"$a\" -e \"$b\" ~ . /tmp /proc/self/environ | wc -l\n";
  }

  std::string audit_log() const {
    const fs::path log = s_.home / ".pi/agent/logs/pi-sandbox-audit.jsonl";
    return fs::exists(log) ? read_file(log) : std::string();
  }
  std::string requests() const {
    return fs::exists(reviewers_ / "requests") ? read_file(reviewers_ / "requests") : "";
  }
  std::string server_log() const { return read_file(s_.root / "server.log"); }

  void expect_no_secret(const RunResult& r) const {
    for (const std::string& secret : {kSecretA, kSecretB}) {
      EXPECT_EQ(r.out.find(secret), std::string::npos) << r.out;
      EXPECT_EQ(r.err.find(secret), std::string::npos) << r.err;
      EXPECT_EQ(audit_log().find(secret), std::string::npos) << audit_log();
      EXPECT_EQ(requests().find(secret), std::string::npos);
    }
  }

  Scratch s_;
  fs::path reviewers_;
  TestNetwork network_;
};

TEST_F(GitCredentials, CloneOverHttpsSucceedsAfterTheCredentialQuestion) {
  const RunResult r =
      run("git clone -q https://git.test/repo.git cloned 2>git.err; echo \"git=$?\"\n"
          "cat cloned/README git.err\n" +
              secrets_inside(),
          R"("git.test")");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "git=0\nrepository of git.test\n0\n") << r.err;
  expect_no_secret(r);
  // One question, for git.test's credential; it was answered once for the whole clone.
  EXPECT_EQ(requests().find(R"("surface":"network")"), std::string::npos) << requests();
  EXPECT_NE(requests().find(R"("operation":"git-credential")"), std::string::npos) << requests();
  EXPECT_NE(requests().find(R"("destination":"git.test:443")"), std::string::npos) << requests();
  const std::string asked = requests();
  EXPECT_EQ(std::count(asked.begin(), asked.end(), '\n'), 1) << asked;
  // The audit log names the host, the surface and the decision.
  EXPECT_NE(audit_log().find(R"("surface":"credential")"), std::string::npos) << audit_log();
  // The server saw alice's credential only after its 401.
  EXPECT_NE(server_log().find("GET git.test /repo.git/info/refs no-auth\n"
                              "GET git.test /repo.git/info/refs auth-ok\n"),
            std::string::npos)
      << server_log();
  EXPECT_EQ(server_log().find("auth-wrong"), std::string::npos) << server_log();
  // Nothing was stored or erased on the host through the sandbox.
  EXPECT_EQ(read_file(s_.home / ".git-credentials"),
            "https://alice:" + kSecretA + "@git.test\nhttps://bob:" + kSecretB + "@other.test\n");
}

TEST_F(GitCredentials, AHostInAllowedDomainsIsAnsweredBeforeAnyConnection) {
  // A credential asked for before git connected (a tool that fills first): allowedDomains
  // lists git.test, so the question is asked and the answer given.
  const RunResult r =
      run("printf 'protocol=https\\nhost=git.test\\n\\n' | git credential fill >filled; "
          "echo \"fill=$?\"; grep -c '^username=alice$' filled; grep -c '^password=' filled; "
          "rm filled\n",
          R"("git.test")");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "fill=0\n1\n1\n") << r.err;
  EXPECT_NE(requests().find(R"("operation":"git-credential")"), std::string::npos) << requests();
  EXPECT_EQ(server_log().find("GET"), std::string::npos) << server_log();
  expect_no_secret(r);
}

TEST_F(GitCredentials, ADeniedQuestionFailsGitWithOneLineAndNoCredential) {
  const RunResult r =
      run("git clone -q https://git.test/repo.git cloned; echo \"git=$?\"\n" + secrets_inside(),
          R"("git.test")", "deny");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "git=128\n0\n") << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: credential: refused https://git.test: Reviewer said deny.\n"),
            std::string::npos)
      << r.err;
  expect_no_secret(r);
  EXPECT_EQ(server_log().find("auth-ok"), std::string::npos) << server_log();
}

TEST_F(GitCredentials, AHostTheCommandCannotReachIsRefusedWithoutAQuestion) {
  // other.test is not allowed: git never reaches it, and a helper asking for it directly gets
  // nothing, and nobody is asked.
  const RunResult r = run(
      "printf 'protocol=https\\nhost=other.test\\n\\n' | git credential fill; echo \"fill=$?\"\n"
      "printf 'protocol=http\\nhost=git.test\\n\\n' | git credential fill; echo \"fill=$?\"\n" +
          secrets_inside(),
      R"("git.test")");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "fill=128\nfill=128\n0\n") << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: credential: refused https://other.test: other.test:443 is "
                       "not in network.allowedDomains and no connection to it was approved in "
                       "this command; nobody was asked\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: credential: refused http://git.test: only https credentials "
                       "are given to the sandbox\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(requests(), "");
  expect_no_secret(r);
}

TEST_F(GitCredentials, AnotherHostsCredentialIsNeverGiven) {
  // The host has other.test's credential only: git.test's clone gets none, and asking for
  // git.test never returns bob's.
  write_file(s_.home / ".git-credentials", "https://bob:" + kSecretB + "@other.test\n");
  const RunResult r = run(
      "git clone -q https://git.test/repo.git cloned; echo \"git=$?\"\n"
      "printf 'protocol=https\\nhost=git.test\\n\\n' | git credential fill; echo \"fill=$?\"\n" +
          secrets_inside(),
      R"("git.test", "other.test")");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "git=128\nfill=128\n0\n") << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: credential: refused https://git.test: the host's git "
                       "credential helpers gave none (git credential fill exited with status "
                       "128)\n"),
            std::string::npos)
      << r.err;
  expect_no_secret(r);
  EXPECT_EQ(server_log().find("auth-"), std::string::npos) << server_log();
}

TEST_F(GitCredentials, AHostConfigurationTheCommandCanWriteIsRefusedWithoutAQuestion) {
  // The user's ~/.gitconfig includes a file of the workspace (a dotfiles repository): the
  // helper a command writes there would be run by the host's `git credential fill`.
  const fs::path marker = s_.root / "helper-ran-on-host";
  write_file(s_.home / ".gitconfig", "[credential]\n\thelper = store\n[include]\n\tpath = " +
                                         (s_.ws / "team.gitconfig").string() + "\n");
  const RunResult r = run("printf '[credential]\\n\\thelper = \"!touch " + marker.string() +
                              "; echo username=u; echo password=p\"\\n' > team.gitconfig\n"
                              "git clone -q https://git.test/repo.git cloned; echo \"git=$?\"\n" +
                              secrets_inside(),
                          R"("git.test")");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "git=128\n0\n") << r.err;
  EXPECT_NE(r.err.find("pi-sandbox: credential: refused https://git.test: the host's git "
                       "configuration is read from " +
                       (s_.ws / "team.gitconfig").string() +
                       ", which the command can write (a credential.helper there would run on "
                       "the host); nobody was asked\n"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(requests(), "");
  expect_no_secret(r);
}

// Through `serve`, as Pi runs commands: the question reaches the host as an approval_request
// that names the credential (title, warning, choices), and no event carries the secret.
TEST_F(GitCredentials, ServeAsksTheHostAndNoEventCarriesTheSecret) {
  write_file(s_.root / "config.json", R"({"network": {"allowedDomains": ["git.test"]}})");
  auto env = TestNetwork::without_proxies(s_.env());
  env["GIT_SSL_CAINFO"] = (s_.ws / "ca.pem").string();
  int in = -1, out = -1;
  const pid_t serve = spawn_piped(
      network_.inside({sandbox_binary(), "serve", "--config", (s_.root / "config.json").string()}),
      env, in, out);
  const std::string exec = R"({"type":"exec","id":"c1","cwd":")" + s_.ws.string() +
                           R"(","command":"git clone -q https://git.test/repo.git cloned && )"
                           R"(cat cloned/README"})"
                           "\n";
  ASSERT_EQ(::write(in, exec.data(), exec.size()), static_cast<ssize_t>(exec.size()));
  std::string all, buffer, title, warning, labels;
  int code = -1;
  for (int i = 0; i < 2000 && code < 0; ++i) {
    pollfd ready{out, POLLIN, 0};
    if (::poll(&ready, 1, 60000) <= 0) break;  // no event for a minute: fail below
    char chunk[4096];
    const ssize_t n = ::read(out, chunk, sizeof chunk);
    if (n <= 0) break;
    all.append(chunk, static_cast<std::size_t>(n));
    buffer.append(chunk, static_cast<std::size_t>(n));
    for (std::size_t lf; (lf = buffer.find('\n')) != std::string::npos;) {
      const auto event = nlohmann::json::parse(buffer.substr(0, lf));
      buffer.erase(0, lf + 1);
      if (event.value("type", "") == "approval_request") {
        title = event.value("title", "");
        warning = event.value("warning", "");
        for (const auto& choice : event["choices"]) labels += choice.value("label", "") + "\n";
        const std::string answer = R"({"type":"approval_response","id":"c1","request_id":")" +
                                   event.value("request_id", "") +
                                   R"(","choice":"allow-once"})"
                                   "\n";
        ASSERT_EQ(::write(in, answer.data(), answer.size()), static_cast<ssize_t>(answer.size()));
      }
      if (event.value("type", "") == "exit") code = event.value("exit_code", -1);
    }
  }
  ::close(in);
  ::kill(serve, SIGKILL);
  wait_process(serve);
  ::close(out);
  EXPECT_EQ(code, 0) << all;
  EXPECT_NE(all.find("repository of git.test"), std::string::npos) << all;
  EXPECT_EQ(title, "Sandbox approval required: git-credential git.test:443");
  EXPECT_EQ(warning,
            "This gives the command your credential for https://git.test:443 from the host's git "
            "credential helpers (the command can then use it as it likes).");
  EXPECT_EQ(labels,
            "Deny\nAllow this exact operation once\n"
            "Allow the credential for git.test:443 for the rest of this command\n"
            "Allow the credential for git.test:443 for this session\n");
  EXPECT_EQ(all.find(kSecretA), std::string::npos) << all;
  EXPECT_EQ(all.find(kSecretB), std::string::npos);
  EXPECT_EQ(audit_log().find(kSecretA), std::string::npos);
}

}  // namespace
}  // namespace pisandbox::testing
