// Tool configuration without its credentials (docs/security.md): a private npm registry over
// HTTPS with its own CA, on 203.0.113.2 in a test network (net_setup.sh, as network_test.cpp
// builds it), named with its CA only in ~/.npmrc next to `//registry.test/:_authToken=...`.
// `npm install` works inside the sandbox, and the token is nowhere inside: not in the
// environment, not in ~/.npmrc, not in any readable file of the home, not in /proc/self/environ,
// and the registry never received it.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "harness.hpp"
#include "net_setup.hpp"

namespace pisandbox::testing {
namespace {

using namespace std::chrono_literals;

/// The token: a test looks for it in pieces so that its own command line never holds it.
const std::string kToken = "NPM-TOKEN-b7d1c0ffee";

const char* const kRegistry = R"PY(# A minimal npm registry over HTTPS: the packument of `tiny`
# and its tarball. Each request is a line in registry.log: "<path> auth=<Authorization or ->".
import base64, hashlib, http.server, io, json, os, ssl, sys, tarfile

ROOT = sys.argv[1]

def tarball():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, text in (("package/package.json",
                            '{"name": "tiny", "version": "1.0.0", "main": "index.js"}'),
                           ("package/index.js", "module.exports = 'tiny from registry.test';\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()

TGZ = tarball()
PACKUMENT = json.dumps({"name": "tiny", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {
    "name": "tiny", "version": "1.0.0", "main": "index.js",
    "dist": {"tarball": "https://registry.test/tiny/-/tiny-1.0.0.tgz",
             "shasum": hashlib.sha1(TGZ).hexdigest(),
             "integrity": "sha512-" + base64.b64encode(hashlib.sha512(TGZ).digest()).decode()}}}})

class Registry(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(os.path.join(ROOT, "registry.log"), "a") as log:
            log.write("%s auth=%s\n" % (self.path, self.headers.get("Authorization", "-")))
        body = {"/tiny": PACKUMENT.encode(), "/tiny/-/tiny-1.0.0.tgz": TGZ}.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("203.0.113.2", 443), Registry)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(ROOT, "registry.pem"), os.path.join(ROOT, "registry.key"))
server.socket = context.wrap_socket(server.socket, server_side=True)
open(os.path.join(ROOT, "servers.ready"), "w").close()
server.serve_forever()
)PY";

/// A CA of its own and the registry's certificate for registry.test, made with openssl.
bool make_certificates(const fs::path& dir) {
  const std::string d = dir.string();
  const std::string script =
      "set -e; cd '" + d +
      "'; openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-keyout ca.key -out ca.pem -subj '/CN=pi-sandbox test registry CA' "
      "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign "
      "2>/dev/null; openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-keyout registry.key -out registry.csr -subj /CN=registry.test 2>/dev/null; "
      "printf 'subjectAltName=DNS:registry.test\\n' > registry.ext; openssl x509 -req -in "
      "registry.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out registry.pem "
      "-extfile registry.ext 2>/dev/null";
  return run_process({"/bin/sh", "-c", script}).exit_code == 0;
}

/// npm's `ca=` value: the PEM as one JSON string (npm's ini reads a quoted value as JSON).
std::string npmrc_ca(const std::string& pem) {
  std::string out = "\"";
  for (const char c : pem) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out + "\"";
}

class NpmRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PI_SANDBOX_REQUIRE(::access("/usr/bin/npm", X_OK) == 0, "npm is not installed");
    PI_SANDBOX_REQUIRE(::access("/usr/bin/openssl", X_OK) == 0, "openssl is not installed");
    PI_SANDBOX_REQUIRE(::access("/usr/sbin/ip", X_OK) == 0 || ::access("/sbin/ip", X_OK) == 0,
                       "iproute2 is not installed");
    ASSERT_TRUE(make_certificates(s_.root));
    write_file(s_.root / "registry.py", kRegistry);
    write_file(s_.root / "setup.sh", kNetSetupScript);
    write_file(s_.root / "hosts", "203.0.113.2 registry.test\n");
    write_file(s_.root / "config.json", R"({"network": {"allowedDomains": ["registry.test"]}})");
    write_file(s_.home / ".npmrc",
               "registry=https://registry.test/\n"
               "ca=" +
                   npmrc_ca(read_file(s_.root / "ca.pem")) + "\n" +
                   "//registry.test/:_authToken=SECRET-" + kToken + "\n" +
                   "fund=false\n"
                   "audit=false\n"
                   "update-notifier=false\n");
    holder_ = spawn_process({"/usr/bin/setsid", "/usr/bin/unshare", "--user", "--map-current-user",
                             "--keep-caps", "--net", "--mount", "--propagation", "private",
                             "/bin/bash", (s_.root / "setup.sh").string(), s_.root.string(),
                             "python3", (s_.root / "registry.py").string(), s_.root.string()});
    for (int i = 0; i < 500 && !fs::exists(s_.root / "ready"); ++i)
      std::this_thread::sleep_for(20ms);
    PI_SANDBOX_REQUIRE(fs::exists(s_.root / "ready"),
                       "could not build the test network (user+network namespaces, veth)");
  }
  void TearDown() override {
    if (holder_ > 0) {
      ::kill(-holder_, SIGKILL);
      wait_process(holder_);
    }
  }

  /// `pi-sandbox run` in the test network, as network_test.cpp runs it.
  RunResult run(const std::string& command) const {
    auto env = s_.env();
    for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                             "ALL_PROXY", "no_proxy", "NO_PROXY"})
      env[name] = "";
    return run_process(
        {"/usr/bin/nsenter", "--preserve-credentials", "-U", "-n", "-m", "-t",
         std::to_string(holder_), "--", sandbox_binary(), "run", "--cwd", s_.ws.string(),
         "--config", (s_.root / "config.json").string(), "--no-prompt", "-c", command},
        env);
  }

  Scratch s_;
  pid_t holder_ = -1;
};

TEST_F(NpmRegistryTest, NpmInstallsFromThePrivateRegistryAndNeverSeesTheToken) {
  const RunResult r =
      run("printf '{\"name\": \"app\", \"version\": \"0.0.0\"}' > package.json\n"
          "npm install tiny --loglevel=error >/dev/null 2>npm.err; echo \"npm=$?\"\n"
          "node -e \"console.log(require('tiny'))\"\n"
          "t=SECRET-; t=\"${t}" +
          kToken.substr(0, 4) + "\"'" + kToken.substr(4) +
          "'\n"
          "env | grep -c \"$t\"\n"
          "grep -c \"$t\" ~/.npmrc\n"
          "grep -c '^registry=https://registry.test/$' ~/.npmrc\n"
          "grep -rlas \"$t\" ~ /proc/self/environ /proc/1/environ | wc -l\n"
          "cat npm.err\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "npm=0\ntiny from registry.test\n0\n0\n1\n0\n") << r.err;
  EXPECT_EQ(read_file(s_.root / "registry.log"), "/tiny auth=-\n/tiny/-/tiny-1.0.0.tgz auth=-\n");
  EXPECT_EQ(r.err.find(kToken), std::string::npos);
}

// `pi-sandbox policy` names the removed line by number and key, never its value.
TEST_F(NpmRegistryTest, PolicyNamesTheRemovedLineWithoutItsValue) {
  const RunResult r = run_process({sandbox_binary(), "policy", "--cwd", s_.ws.string()}, s_.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  sanitized copy (read-only, without its credentials): " +
                       (s_.home / ".npmrc").string() +
                       "\n    line 3: //registry.test/:_authToken removed\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(kToken), std::string::npos);
  const RunResult j =
      run_process({sandbox_binary(), "policy", "--json", "--cwd", s_.ws.string()}, s_.env());
  EXPECT_NE(j.out.find(R"("removed": [
        {
          "key": "//registry.test/:_authToken",
          "line": 3
        }
      ],)"),
            std::string::npos)
      << j.out;
  EXPECT_EQ(j.out.find(kToken), std::string::npos);
}

}  // namespace
}  // namespace pisandbox::testing
