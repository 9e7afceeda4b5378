// Tool configuration without its credentials (docs/security.md): a private npm registry over
// HTTPS with its own CA, on 203.0.113.2 in a test network (test_network.hpp), named with its CA
// only in ~/.npmrc next to `//registry.test/:_authToken=...`. `npm install` works inside the
// sandbox, and the token is nowhere inside: not in the environment, not in ~/.npmrc, not in any
// readable file of the home, not in /proc/self/environ, and the registry never received it.
#include <unistd.h>

#include "harness.hpp"
#include "test_network.hpp"

namespace pisandbox::testing {
namespace {

/// The token: a test looks for it in pieces so that its own command line never holds it.
const std::string kToken = "NPM-TOKEN-b7d1c0ffee";

/// The handler of the HTTPS server (https_server_script()).
const char* const kHandler = R"PY(# A minimal npm registry over HTTPS: the packument of `tiny`
# and its tarball. Each request is a line in registry.log: "<path> auth=<Authorization or ->".
import base64, hashlib, http.server, io, json, os, sys, tarfile

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

class Handler(http.server.BaseHTTPRequestHandler):
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

)PY";

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
    ASSERT_TRUE(make_test_certificates(s_.root, {"registry.test"}));
    write_file(s_.root / "config.json", R"({"network": {"allowedDomains": ["registry.test"]}})");
    write_file(s_.home / ".npmrc",
               "registry=https://registry.test/\n"
               "ca=" +
                   npmrc_ca(read_file(s_.root / "ca.pem")) + "\n" +
                   "//registry.test/:_authToken=SECRET-" + kToken + "\n" +
                   "fund=false\n"
                   "audit=false\n"
                   "update-notifier=false\n");
    PI_SANDBOX_REQUIRE(
        network_.start(s_.root, "203.0.113.2 registry.test\n", https_server_script(kHandler)),
        "could not build the test network (user+network namespaces, veth)");
  }

  /// `pi-sandbox run` in the test network, as network_test.cpp runs it.
  RunResult run(const std::string& command) const {
    return run_process(
        network_.inside({sandbox_binary(), "run", "--cwd", s_.ws.string(), "--config",
                         (s_.root / "config.json").string(), "--no-prompt", "-c", command}),
        TestNetwork::without_proxies(s_.env()));
  }

  Scratch s_;
  TestNetwork network_;
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
