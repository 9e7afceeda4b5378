// A private test network for the integration tests whose tools reach servers of their own:
// a holder process in new user, network and mount namespaces joined by a veth pair to a second
// network namespace where the test's servers run on 203.0.113.2 (a public address for the
// proxy's checks), with /etc/hosts bind-mounted in the holder's mount namespace only
// (tests/integration/net_setup.sh). pi-sandbox runs in it through inside(): nsenter into the
// holder's namespaces. So a test works unprivileged and never touches the host's network.
//
// For HTTPS servers (git over HTTPS, an npm registry): make_test_certificates() makes a CA of the
// test's own with openssl(1), and https_server_script() puts a Python http.server handler
// behind TLS with it.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness.hpp"
#include "net_setup.hpp"

namespace pisandbox::testing {

/// The holder of a test network; killed with its process group on destruction.
class TestNetwork {
 public:
  TestNetwork() = default;
  ~TestNetwork() {
    if (holder_ > 0) {
      ::kill(-holder_, SIGKILL);
      wait_process(holder_);
    }
  }
  TestNetwork(const TestNetwork&) = delete;
  TestNetwork& operator=(const TestNetwork&) = delete;

  /// Writes `root`/server.py (`server_source`, run as `python3 server.py <root>` in the
  /// servers' namespace; it touches `<root>`/servers.ready once it listens), `root`/hosts
  /// (`hosts`, /etc/hosts syntax) and `root`/setup.sh, starts the holder and waits until the
  /// servers listen (`root`/ready, at most 500 polls of 20 ms). False when the network could
  /// not be built (no user or network namespaces, no veth, no ip): the caller skips with that
  /// reason.
  bool start(const fs::path& root, std::string_view hosts, std::string_view server_source) {
    write_file(root / "server.py", std::string(server_source));
    write_file(root / "setup.sh", kNetSetupScript);
    write_file(root / "hosts", std::string(hosts));
    holder_ = spawn_process({"/usr/bin/setsid", "/usr/bin/unshare", "--user", "--map-current-user",
                             "--keep-caps", "--net", "--mount", "--propagation", "private",
                             "/bin/bash", (root / "setup.sh").string(), root.string(), "python3",
                             (root / "server.py").string(), root.string()});
    for (int i = 0; i < 500 && !fs::exists(root / "ready"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return fs::exists(root / "ready");
  }

  /// The holder's pid (-1 before start()): its /proc entry shows the network's side where
  /// pi-sandbox runs.
  pid_t holder() const { return holder_; }

  /// `argv` run inside the network: nsenter into the holder's namespaces first.
  std::vector<std::string> inside(const std::vector<std::string>& argv) const {
    std::vector<std::string> out = {"/usr/bin/nsenter",
                                    "--preserve-credentials",
                                    "-U",
                                    "-n",
                                    "-m",
                                    "-t",
                                    std::to_string(holder_),
                                    "--"};
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  /// `env` without the test runner's proxy variables (an empty one counts as unset), so
  /// pi-sandbox has no parent proxy.
  static std::map<std::string, std::string> without_proxies(
      std::map<std::string, std::string> env) {
    for (const char* name : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                             "ALL_PROXY", "no_proxy", "NO_PROXY"})
      env[name] = "";
    return env;
  }

 private:
  pid_t holder_ = -1;
};

/// A CA of the test's own and a server certificate signed by it, made with openssl(1) in `dir`:
/// `ca.pem` (the CA, for the client to trust), `server.pem` and `server.key` (EC P-256, valid
/// two days) with CN = the first of `names` and a subjectAltName DNS entry for each (at least
/// one name). False when openssl fails.
inline bool make_test_certificates(const fs::path& dir, const std::vector<std::string>& names) {
  std::string alt_names;
  for (const std::string& name : names) alt_names += (alt_names.empty() ? "DNS:" : ",DNS:") + name;
  const std::string script =
      "set -e; cd '" + dir.string() +
      "'; openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 "
      "-keyout ca.key -out ca.pem -subj '/CN=pi-sandbox test CA' "
      "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign "
      "2>/dev/null; openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
      "-keyout server.key -out server.csr -subj /CN=" +
      names.front() + " 2>/dev/null; printf 'subjectAltName=" + alt_names +
      "\\n' > server.ext; openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
      "-CAcreateserial -days 2 -out server.pem -extfile server.ext 2>/dev/null";
  return run_process({"/bin/sh", "-c", script}).exit_code == 0;
}

/// A server for TestNetwork::start() that serves `handler_source` over HTTPS: the source sets
/// ROOT (sys.argv[1], the scratch root) and defines `Handler`, a
/// http.server.BaseHTTPRequestHandler; what follows it listens on 203.0.113.2:443 with
/// ROOT/server.pem and ROOT/server.key (make_test_certificates()) through Python's ssl module and
/// touches ROOT/servers.ready.
inline std::string https_server_script(std::string_view handler_source) {
  return std::string(handler_source) + R"PY(
import http.server, os, ssl

server = http.server.ThreadingHTTPServer(("203.0.113.2", 443), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(ROOT, "server.pem"), os.path.join(ROOT, "server.key"))
server.socket = context.wrap_socket(server.socket, server_side=True)
open(os.path.join(ROOT, "servers.ready"), "w").close()
server.serve_forever()
)PY";
}

}  // namespace pisandbox::testing
