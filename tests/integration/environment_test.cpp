// The environment of a sandboxed command (docs/security.md, "Environment"; docs/cases.md C-17):
// the real binary, run as the caller would, with credentials in its environment.
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using nlohmann::json;

/// `pi-sandbox <args...>` with the scratch's environment plus `extra`.
RunResult pi_sandbox(const Scratch& scratch, std::vector<std::string> args,
                     const std::map<std::string, std::string>& extra) {
  auto env = scratch.env();
  for (const auto& [name, value] : extra) env[name] = value;
  args.insert(args.begin(), sandbox_binary());
  return run_process(args, env);
}

/// Writes the trusted configuration (outside the workspace) and returns its path.
std::string config(const Scratch& scratch, const std::string& text) {
  const fs::path path = scratch.root / "config.json";
  write_file(path, text);
  return path.string();
}

/// Whether `env`'s output has a line starting with `prefix`.
bool has_line(const std::string& env, const std::string& prefix) {
  return env.starts_with(prefix) || env.find("\n" + prefix) != std::string::npos;
}

TEST(Environment, TheIssueInputLosesBothSecretsAndKeepsTheRest) {
  Scratch scratch;
  const RunResult r =
      pi_sandbox(scratch, {"run", "--cwd", scratch.ws.string(), "-c", "env"},
                 {{"SECRET_TOKEN", "x"}, {"AWS_SECRET_ACCESS_KEY", "y"}, {"KEEP_ME", "k"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(has_line(r.out, "SECRET_TOKEN=")) << r.out;
  EXPECT_FALSE(has_line(r.out, "AWS_SECRET_ACCESS_KEY=")) << r.out;
  EXPECT_TRUE(has_line(r.out, "KEEP_ME=k\n")) << r.out;
  EXPECT_TRUE(has_line(r.out, "PI_SANDBOX=1\n")) << r.out;
  EXPECT_TRUE(has_line(r.out, "SANDBOX_RUNTIME=1\n")) << r.out;
}

TEST(Environment, ACertificateBundlePathIsKeptTheAwsKeyIsNot) {
  Scratch scratch;
  const RunResult r =
      pi_sandbox(scratch,
                 {"run", "--cwd", scratch.ws.string(), "-c",
                  R"(printf '%s|%s|%s' "${AWS_CA_BUNDLE-unset}" "${NODE_EXTRA_CA_CERTS-unset}" )"
                  R"("${AWS_ACCESS_KEY_ID-unset}")"},
                 {{"AWS_CA_BUNDLE", "/etc/ssl/corp.pem"},
                  {"NODE_EXTRA_CA_CERTS", "/etc/ssl/corp.pem"},
                  {"AWS_ACCESS_KEY_ID", "a"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/etc/ssl/corp.pem|/etc/ssl/corp.pem|unset");
}

TEST(Environment, PassThroughKeepsAndRemoveRemoves) {
  Scratch scratch;
  const std::string file = config(
      scratch, R"({"environment": {"passThrough": ["GITHUB_TOKEN"], "remove": ["DATABASE_URL"]}})");
  const RunResult r =
      pi_sandbox(scratch,
                 {"run", "--cwd", scratch.ws.string(), "--config", file, "-c",
                  R"(printf '%s|%s|%s|%s' "${GITHUB_TOKEN-unset}" "${NPM_TOKEN-unset}" )"
                  R"("${DATABASE_URL-unset}" "${LANG-unset}")"},
                 {{"GITHUB_TOKEN", "g"},
                  {"NPM_TOKEN", "n"},
                  {"DATABASE_URL", "postgres://u:p@h/d"},
                  {"LANG", "C"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "g|unset|unset|C");
  EXPECT_EQ(r.err, "");
}

TEST(Environment, PiSandboxsOwnVariablesAreSetAfterTheFilter) {
  Scratch scratch;
  const std::string file =
      config(scratch, R"({"environment": {"remove": ["HTTP_PROXY", "TMPDIR", "JAVA_*"]}})");
  const RunResult r = pi_sandbox(scratch,
                                 {"run", "--cwd", scratch.ws.string(), "--config", file, "-c",
                                  R"(printf '%s|%s|%s' "$HTTP_PROXY" "$TMPDIR" )"
                                  R"("$JAVA_TOOL_OPTIONS")"},
                                 {{"HTTP_PROXY", "http://corp:8080"},
                                  {"TMPDIR", "/var/tmp/x"},
                                  {"JAVA_TOOL_OPTIONS", "-Xmx64m"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "http://127.0.0.1:3128|/tmp|-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "
            "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
            "-Dhttp.nonProxyHosts=localhost|127.*|[::1]");
}

TEST(Environment, JavaToolOptionsAreMergedWithTheCallers) {
  Scratch scratch;
  const RunResult r =
      pi_sandbox(scratch,
                 {"run", "--cwd", scratch.ws.string(), "--", "/usr/bin/printenv",
                  "JAVA_TOOL_OPTIONS", "YARN_HTTPS_PROXY", "ELECTRON_GET_USE_PROXY"},
                 {{"JAVA_TOOL_OPTIONS", "-Xmx64m -Dhttps.proxyHost=corp"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "-Xmx64m -Dhttps.proxyHost=corp -Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 "
            "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
            "-Dhttp.nonProxyHosts=localhost|127.*|[::1]\nhttp://127.0.0.1:3128\ntrue\n");
}

TEST(Environment, PolicyShowsTheRulesAndWhatItRemovesNeverTheValues) {
  Scratch scratch;
  const std::string file = config(
      scratch, R"({"environment": {"passThrough": ["GITHUB_TOKEN"], "remove": ["DATABASE_*"]}})");
  const std::map<std::string, std::string> env = {{"SECRET_TOKEN", "value-one"},
                                                  {"DATABASE_URL", "value-two"},
                                                  {"GITHUB_TOKEN", "value-three"}};
  const RunResult text =
      pi_sandbox(scratch, {"policy", "--cwd", scratch.ws.string(), "--config", file}, env);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  for (const char* line :
       {"environment (the caller's, less credentials):\n"
        "  removed by default: *KEY*, *SECRET*, *TOKEN*, *PASSWORD*, *PASSWD*, *PASSPHRASE*, "
        "*CREDENTIAL*, *_AUTH, *_PAT, AWS_*, DOCKER_AUTH_CONFIG, MYSQL_PWD, GIT_CONFIG_PARAMETERS\n"
        "  kept by default (certificate paths, no secret): *_CA_BUNDLE, SSL_CERT_FILE, "
        "SSL_CERT_DIR, NODE_EXTRA_CA_CERTS, PIP_CERT\n"
        "  environment.passThrough: GITHUB_TOKEN\n"
        "  environment.remove: DATABASE_*\n"
        "  removed from this environment:\n",
        "\n    SECRET_TOKEN  [default rule *SECRET*]\n",
        "\n    DATABASE_URL  [environment.remove entry DATABASE_*]\n",
        "\n  set by pi-sandbox (the caller's values replaced, JAVA_TOOL_OPTIONS merged): TMPDIR, "
        "TMP, TEMP, PI_SANDBOX, SANDBOX_RUNTIME, HTTP_PROXY, "})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\nin:\n" << text.out;
  EXPECT_EQ(text.out.find("GITHUB_TOKEN  ["), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("value-"), std::string::npos) << text.out;

  const RunResult as_json = pi_sandbox(
      scratch, {"policy", "--cwd", scratch.ws.string(), "--config", file, "--json"}, env);
  EXPECT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(as_json.out.find("value-"), std::string::npos);
  const json e = json::parse(as_json.out)["environment"];
  EXPECT_EQ(e["pass_through"], json::parse(R"(["GITHUB_TOKEN"])"));
  EXPECT_EQ(e["remove"], json::parse(R"(["DATABASE_*"])"));
  EXPECT_EQ(e["default_removed"].size(), 13u);
  EXPECT_EQ(e["default_kept"], json::parse(R"(["*_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
                                              "NODE_EXTRA_CA_CERTS", "PIP_CERT"])"));
  const auto removed = e["removed"];
  EXPECT_NE(std::ranges::find(removed, json::parse(R"({"name": "SECRET_TOKEN", "rule": "*SECRET*",
                                                   "source": "default"})")),
            removed.end())
      << removed;
  EXPECT_NE(std::ranges::find(removed, json::parse(R"({"name": "DATABASE_URL",
                                                   "rule": "DATABASE_*",
                                                   "source": "configuration"})")),
            removed.end())
      << removed;
  EXPECT_NE(std::ranges::find(e["set"], "JAVA_TOOL_OPTIONS"), e["set"].end()) << e["set"];
}

TEST(Environment, AnInvalidEntryIsAConfigurationErrorWithItsHint) {
  Scratch scratch;
  const std::string file = config(scratch, R"({"environment": {"remove": ["A-B"]}})");
  const RunResult r = pi_sandbox(
      scratch, {"run", "--cwd", scratch.ws.string(), "--config", file, "-c", "true"}, {});
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err,
            "pi-sandbox: invalid pi-sandbox configuration: "
            "environment.remove[0] contains an invalid variable name pattern: A-B\n"
            "an entry is a variable name (ASCII letters, digits and _) in which * matches "
            "any run of characters, e.g. GITHUB_TOKEN or *_API_KEY\n");
}

}  // namespace
}  // namespace pisandbox::testing
