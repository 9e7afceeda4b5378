// A small private network for the approval tests (terminal questions, serve's answers): the
// names asked.test and other.test resolve to 203.0.113.2 (a public address for the proxy's
// checks), where an HTTP server answers every request with `hello from <Host>\n`. Built like
// network_test.cpp's (tests/integration/net_setup.sh: a holder in new user, network and mount
// namespaces, the server in a network namespace of its own, /etc/hosts bind-mounted there), so
// it works unprivileged and never touches the host's network. pi-sandbox runs in it through
// inside(): nsenter into the holder's namespaces (test_network.hpp).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "test_network.hpp"

namespace pisandbox::testing {

class ApprovalNetwork {
 public:
  ApprovalNetwork() {
    ready_ = network_.start(scratch_.root, "203.0.113.2 asked.test other.test\n", kServer);
  }

  /// Whether the network could be built (user and network namespaces, veth, curl, ip).
  bool ready() const { return ready_; }

  /// `argv` run inside the network (TestNetwork::inside()).
  std::vector<std::string> inside(const std::vector<std::string>& argv) const {
    return network_.inside(argv);
  }

  /// `env` without the test runner's proxy variables (TestNetwork::without_proxies()).
  static std::map<std::string, std::string> without_proxies(
      std::map<std::string, std::string> env) {
    return TestNetwork::without_proxies(std::move(env));
  }

 private:
  static constexpr const char* kServer = R"PY(import http.server, os, sys

class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("hello from %s\n" % self.headers.get("Host", "")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("203.0.113.2", 80), Hello)
open(os.path.join(sys.argv[1], "servers.ready"), "w").close()
server.serve_forever()
)PY";

  Scratch scratch_;
  TestNetwork network_;
  bool ready_ = false;
};

/// A test suite whose tests share one ApprovalNetwork (built once per suite); each test is
/// skipped, with the reason, when curl is missing or the network cannot be built.
class ApprovalNetworkSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { network_ = new ApprovalNetwork(); }
  static void TearDownTestSuite() {
    delete network_;
    network_ = nullptr;
  }
  void SetUp() override {
    PI_SANDBOX_REQUIRE(::access("/usr/bin/curl", X_OK) == 0, "curl is not installed");
    PI_SANDBOX_REQUIRE(network_->ready(),
                       "could not build the test network (user+network namespaces, veth)");
  }
  static inline ApprovalNetwork* network_ = nullptr;

  /// How many lines of the audit log under `home` contain `text`.
  static std::size_t audit_lines_with(const fs::path& home, const std::string& text) {
    const fs::path log = home / ".pi/agent/logs/pi-sandbox-audit.jsonl";
    if (!fs::exists(log)) return 0;
    std::size_t count = 0;
    std::size_t at = 0;
    const std::string all = read_file(log);
    while ((at = all.find(text, at)) != std::string::npos) {
      ++count;
      at += text.size();
    }
    return count;
  }
};

}  // namespace pisandbox::testing
