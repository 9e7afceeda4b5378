// The environment a sandboxed command inherits (policy/environment.hpp) and the variables that
// point its tools at the proxy (policy/proxy_environment.hpp).
#include "policy/environment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "policy/proxy_environment.hpp"

namespace {

using namespace pisandbox::policy;

std::vector<std::string> names(const std::vector<RemovedVariable>& removed) {
  std::vector<std::string> out;
  for (const auto& r : removed) out.push_back(r.name);
  return out;
}

TEST(VariablePattern, Matching) {
  EXPECT_TRUE(matches_variable("GITHUB_TOKEN", "GITHUB_TOKEN"));
  EXPECT_TRUE(matches_variable("GITHUB_TOKEN", "github_token"));
  EXPECT_FALSE(matches_variable("GITHUB_TOKEN", "GITHUB_TOKENS"));
  EXPECT_TRUE(matches_variable("*TOKEN*", "TOKEN"));
  EXPECT_TRUE(matches_variable("*TOKEN*", "SECRET_TOKEN"));
  EXPECT_TRUE(matches_variable("*TOKEN*", "npm_token_x"));
  EXPECT_FALSE(matches_variable("*TOKEN*", "TOKE"));
  EXPECT_TRUE(matches_variable("AWS_*", "AWS_REGION"));
  EXPECT_FALSE(matches_variable("AWS_*", "MY_AWS_REGION"));
  EXPECT_TRUE(matches_variable("*_API_KEY", "OPENAI_API_KEY"));
  EXPECT_FALSE(matches_variable("*_API_KEY", "OPENAI_API_KEY_FILE"));
  EXPECT_TRUE(matches_variable("A*B*C", "AxxBxxBxxC"));
  EXPECT_FALSE(matches_variable("A*B*C", "AxxBxxCxxB"));
  EXPECT_TRUE(matches_variable("*", ""));
  EXPECT_TRUE(matches_variable("**", "X"));
  EXPECT_FALSE(matches_variable("X", ""));
}

TEST(VariablePattern, Validity) {
  for (const char* good : {"A", "a_b", "*", "*_API_KEY", "X1", "1X"})
    EXPECT_TRUE(is_variable_pattern(good)) << good;
  for (const char* bad : {"", "A-B", "A=B", " A", "A?", "A.B", "\xc3\xa9"})
    EXPECT_FALSE(is_variable_pattern(bad)) << bad;
}

TEST(EnvironmentFilter, TheIssueInputLosesBothSecretsAndKeepsTheRest) {
  const std::vector<std::string> caller = {"PATH=/usr/bin", "SECRET_TOKEN=x",
                                           "AWS_SECRET_ACCESS_KEY=y", "HOME=/home/me", "LANG=C"};
  const CommandEnvironment out = filter_environment(caller, {});
  EXPECT_EQ(out.env, (std::vector<std::string>{"PATH=/usr/bin", "HOME=/home/me", "LANG=C"}));
  EXPECT_EQ(out.removed, (std::vector<RemovedVariable>{
                             {"SECRET_TOKEN", "*SECRET*", RemovalSource::Default},
                             {"AWS_SECRET_ACCESS_KEY", "*KEY*", RemovalSource::Default}}));
}

TEST(EnvironmentFilter, EveryDefaultRuleRemovesItsWellKnownNames) {
  const std::vector<std::string> caller = {"GITHUB_TOKEN=1",
                                           "GH_TOKEN=1",
                                           "NPM_TOKEN=1",
                                           "NODE_AUTH_TOKEN=1",
                                           "OPENAI_API_KEY=1",
                                           "ANTHROPIC_API_KEY=1",
                                           "AWS_PROFILE=1",
                                           "AWS_SESSION_TOKEN=1",
                                           "PGPASSWORD=1",
                                           "TWINE_PASSWORD=1",
                                           "GOOGLE_APPLICATION_CREDENTIALS=1",
                                           "AZURE_CLIENT_SECRET=1",
                                           "DOCKER_AUTH_CONFIG=1",
                                           "MYSQL_PWD=1",
                                           "GIT_CONFIG_PARAMETERS='http.extraheader'='X: T'",
                                           "npm_config__auth=1",
                                           "GITHUB_PAT=1",
                                           "GPG_PASSPHRASE=1",
                                           "SMB_PASSWD=1",
                                           "github_token=1"};
  const CommandEnvironment out = filter_environment(caller, {});
  EXPECT_EQ(out.env, std::vector<std::string>{});
  EXPECT_EQ(out.removed.size(), caller.size());
}

TEST(EnvironmentFilter, OrdinaryNamesPass) {
  const std::vector<std::string> caller = {"PATH=/bin",
                                           "HOME=/h",
                                           "USER=me",
                                           "SHELL=/bin/bash",
                                           "TERM=xterm",
                                           "LANG=C.UTF-8",
                                           "PWD=/w",
                                           "OLDPWD=/",
                                           "EDITOR=vi",
                                           "GOPATH=/g",
                                           "GIT_AUTHOR_NAME=me",
                                           "GIT_AUTHOR_EMAIL=m@x",
                                           "KUBECONFIG=/k",
                                           "SSH_AGENT_PID=1",
                                           "SSH_AUTH_SOCK=/run/a.sock",
                                           "XDG_RUNTIME_DIR=/run/user/1",
                                           "DISPLAY=:0",
                                           "NO_EQUALS_SIGN",
                                           "PI_SANDBOX_SUBAGENT_DEPTH=1"};
  const CommandEnvironment out = filter_environment(caller, {});
  EXPECT_EQ(out.env, caller);
  EXPECT_TRUE(out.removed.empty());
}

TEST(EnvironmentFilter, CertificateBundlePathsAreKeptAndTheRestOfAwsGoes) {
  const std::vector<std::string> caller = {"AWS_CA_BUNDLE=/etc/ssl/corp.pem",
                                           "REQUESTS_CA_BUNDLE=/etc/ssl/corp.pem",
                                           "CURL_CA_BUNDLE=/etc/ssl/corp.pem",
                                           "SSL_CERT_FILE=/etc/ssl/corp.pem",
                                           "SSL_CERT_DIR=/etc/ssl/certs",
                                           "NODE_EXTRA_CA_CERTS=/etc/ssl/corp.pem",
                                           "PIP_CERT=/etc/ssl/corp.pem",
                                           "AWS_ACCESS_KEY_ID=a",
                                           "AWS_REGION=r"};
  const CommandEnvironment out = filter_environment(caller, {});
  EXPECT_EQ(out.env, std::vector<std::string>(caller.begin(), caller.end() - 2));
  EXPECT_EQ(out.removed,
            (std::vector<RemovedVariable>{{"AWS_ACCESS_KEY_ID", "*KEY*", RemovalSource::Default},
                                          {"AWS_REGION", "AWS_*", RemovalSource::Default}}));
}

TEST(EnvironmentFilter, RemoveStillRemovesACertificateBundlePath) {
  EnvironmentSpec spec;
  spec.remove = {"AWS_CA_BUNDLE"};
  const std::vector<std::string> caller = {"AWS_CA_BUNDLE=/etc/ssl/corp.pem"};
  EXPECT_EQ(filter_environment(caller, spec).removed,
            (std::vector<RemovedVariable>{
                {"AWS_CA_BUNDLE", "AWS_CA_BUNDLE", RemovalSource::Configuration}}));
}

TEST(EnvironmentFilter, PassThroughKeepsRemoveWinsAndAddsNames) {
  EnvironmentSpec spec;
  spec.pass_through = {"GITHUB_TOKEN", "*_API_KEY"};
  spec.remove = {"DATABASE_URL", "OPENAI_*"};
  const std::vector<std::string> caller = {"GITHUB_TOKEN=g",      "OPENAI_API_KEY=o",
                                           "ANTHROPIC_API_KEY=a", "DATABASE_URL=postgres://u:p@h",
                                           "NPM_TOKEN=n",         "PATH=/bin"};
  const CommandEnvironment out = filter_environment(caller, spec);
  EXPECT_EQ(out.env,
            (std::vector<std::string>{"GITHUB_TOKEN=g", "ANTHROPIC_API_KEY=a", "PATH=/bin"}));
  EXPECT_EQ(out.removed, (std::vector<RemovedVariable>{
                             {"OPENAI_API_KEY", "OPENAI_*", RemovalSource::Configuration},
                             {"DATABASE_URL", "DATABASE_URL", RemovalSource::Configuration},
                             {"NPM_TOKEN", "*TOKEN*", RemovalSource::Default}}));
}

TEST(EnvironmentFilter, PassThroughStarTurnsTheDefaultsOff) {
  EnvironmentSpec spec;
  spec.pass_through = {"*"};
  const std::vector<std::string> caller = {"GITHUB_TOKEN=g", "AWS_REGION=r"};
  EXPECT_EQ(filter_environment(caller, spec).env, caller);
}

TEST(CommandEnvironment, OwnVariablesAreAddedAfterTheFilterAndReplaceTheCallers) {
  EnvironmentSpec spec;
  spec.remove = {"HTTP_PROXY", "TMPDIR"};
  const std::vector<std::string> caller = {"PATH=/bin",         "HTTP_PROXY=http://corp:8080",
                                           "TMPDIR=/var/x",     "PI_SANDBOX=0",
                                           "YARN_HTTP_PROXY=x", "GH_TOKEN=t",
                                           "SANDBOX_RUNTIME=0"};
  const CommandEnvironment out = command_environment(caller, spec, "/opt/pi-sandbox");
  EXPECT_EQ(names(out.removed), (std::vector<std::string>{"HTTP_PROXY", "TMPDIR", "GH_TOKEN"}));
  std::vector<std::string> expected = {"PATH=/bin", "TMPDIR=/tmp",  "TMP=/tmp",
                                       "TEMP=/tmp", "PI_SANDBOX=1", "SANDBOX_RUNTIME=1"};
  for (auto& entry : proxy_environment("/opt/pi-sandbox")) expected.push_back(entry);
  for (auto& entry : git_credential_environment("/opt/pi-sandbox", 0)) expected.push_back(entry);
  EXPECT_EQ(out.env, expected);
  const auto names_set = sandbox_variable_names();
  ASSERT_EQ(names_set.size(), expected.size() - 1);
  for (std::size_t i = 0; i < names_set.size(); ++i)
    EXPECT_TRUE(expected[i + 1].starts_with(names_set[i] + "=")) << names_set[i];
}

// git's credential helper inside is pi-sandbox's (docs/network.md, "Credentials for HTTPS"):
// the list of helpers cleared, then `credential-helper`, after the caller's own entries of git's
// configuration, whose stale keys past its count are dropped.
TEST(CommandEnvironment, GitCredentialHelperComesAfterTheCallersGitConfiguration) {
  EXPECT_EQ(git_credential_environment("/opt/pi sandbox/it's", 0),
            (std::vector<std::string>{
                "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=credential.helper",
                "GIT_CONFIG_VALUE_0=", "GIT_CONFIG_KEY_1=credential.helper",
                R"(GIT_CONFIG_VALUE_1=!'/opt/pi sandbox/it'\''s' credential-helper)"}));
  const std::vector<std::string> caller = {"GIT_CONFIG_COUNT=1",     "GIT_CONFIG_KEY_0=core.pager",
                                           "GIT_CONFIG_VALUE_0=cat", "GIT_CONFIG_KEY_1=stale.key",
                                           "GIT_CONFIG_VALUE_1=x",   "GIT_CONFIG_KEY_X=y"};
  EnvironmentSpec spec;
  spec.pass_through = {"GIT_CONFIG_KEY_*"};
  const CommandEnvironment out = command_environment(caller, spec, "/p");
  const auto git = [&out] {
    std::vector<std::string> entries;
    for (const auto& entry : out.env)
      if (entry.starts_with("GIT_CONFIG_")) entries.push_back(entry);
    return entries;
  }();
  EXPECT_EQ(git, (std::vector<std::string>{
                     "GIT_CONFIG_KEY_0=core.pager", "GIT_CONFIG_VALUE_0=cat", "GIT_CONFIG_KEY_X=y",
                     "GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_1=credential.helper",
                     "GIT_CONFIG_VALUE_1=", "GIT_CONFIG_KEY_2=credential.helper",
                     "GIT_CONFIG_VALUE_2=!'/p' credential-helper"}));
  EXPECT_EQ(git_config_count(std::vector<std::string>{"GIT_CONFIG_COUNT=x"}), 0u);
  EXPECT_EQ(git_config_count(std::vector<std::string>{"GIT_CONFIG_COUNT="}), 0u);
  EXPECT_EQ(git_config_count(std::vector<std::string>{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=a",
                                                      "GIT_CONFIG_KEY_1=b"}),
            2u);
  // By default the filter removes the keys (`*KEY*`): the caller's values alone are dropped.
  EXPECT_EQ(
      git_config_count(std::vector<std::string>{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_VALUE_0=a"}), 0u);
  const CommandEnvironment filtered = command_environment(caller, {}, "/p");
  EXPECT_EQ(std::ranges::count(filtered.env, "GIT_CONFIG_VALUE_0=cat"), 0);
  EXPECT_EQ(std::ranges::count(filtered.env, "GIT_CONFIG_VALUE_0="), 1);
  EXPECT_EQ(std::ranges::count(filtered.env, "GIT_CONFIG_COUNT=2"), 1);
}

TEST(CommandEnvironment, JavaToolOptionsAreMergedWithTheCallers) {
  const std::vector<std::string> caller = {"JAVA_TOOL_OPTIONS=-Xmx512m -Dhttp.proxyHost=corp"};
  const CommandEnvironment out = command_environment(caller, {}, "/p");
  const std::string expected =
      "JAVA_TOOL_OPTIONS=-Xmx512m -Dhttp.proxyHost=corp -Dhttp.proxyHost=127.0.0.1 "
      "-Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128 "
      "-Dhttp.nonProxyHosts=localhost|127.*|[::1]";
  EXPECT_EQ(std::ranges::count(out.env, expected), 1);
  EXPECT_EQ(std::ranges::count_if(
                out.env, [](const std::string& e) { return e.starts_with("JAVA_TOOL_OPTIONS="); }),
            1);
}

TEST(ProxyEnvironment, JavaToolOptions) {
  EXPECT_EQ(java_tool_options(std::nullopt), kJavaProxyOptions);
  EXPECT_EQ(java_tool_options(""), kJavaProxyOptions);
  EXPECT_EQ(java_tool_options("  "), kJavaProxyOptions);
  EXPECT_EQ(java_tool_options("-Xss1m"), "-Xss1m " + std::string(kJavaProxyOptions));
}

TEST(ProxyEnvironment, TheWholeList) {
  EXPECT_EQ(proxy_environment("/usr/bin/pi-sandbox"),
            (std::vector<std::string>{
                "HTTP_PROXY=http://127.0.0.1:3128",
                "HTTPS_PROXY=http://127.0.0.1:3128",
                "http_proxy=http://127.0.0.1:3128",
                "https_proxy=http://127.0.0.1:3128",
                "GRPC_PROXY=http://127.0.0.1:3128",
                "grpc_proxy=http://127.0.0.1:3128",
                "npm_config_proxy=http://127.0.0.1:3128",
                "npm_config_https_proxy=http://127.0.0.1:3128",
                "DOCKER_HTTP_PROXY=http://127.0.0.1:3128",
                "DOCKER_HTTPS_PROXY=http://127.0.0.1:3128",
                "GLOBAL_AGENT_HTTP_PROXY=http://127.0.0.1:3128",
                "YARN_HTTP_PROXY=http://127.0.0.1:3128",
                "YARN_HTTPS_PROXY=http://127.0.0.1:3128",
                "ALL_PROXY=socks5h://127.0.0.1:1080",
                "all_proxy=socks5h://127.0.0.1:1080",
                "FTP_PROXY=socks5h://127.0.0.1:1080",
                "ftp_proxy=socks5h://127.0.0.1:1080",
                "NO_PROXY=localhost,127.0.0.1,::1",
                "no_proxy=localhost,127.0.0.1,::1",
                "npm_config_noproxy=localhost,127.0.0.1,::1",
                "RSYNC_PROXY=127.0.0.1:3128",
                "NODE_USE_ENV_PROXY=1",
                "ELECTRON_GET_USE_PROXY=true",
                "CLOUDSDK_PROXY_TYPE=http",
                "CLOUDSDK_PROXY_ADDRESS=127.0.0.1",
                "CLOUDSDK_PROXY_PORT=3128",
                "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o "
                "ProxyCommand=''\\''/usr/bin/pi-sandbox'\\'' proxy-connect %h %p'",
                "JAVA_TOOL_OPTIONS=" + std::string(kJavaProxyOptions),
            }));
  EXPECT_TRUE(is_proxy_variable("JAVA_TOOL_OPTIONS"));
  EXPECT_TRUE(is_proxy_variable("YARN_HTTPS_PROXY"));
  EXPECT_FALSE(is_proxy_variable("http_Proxy"));
  EXPECT_FALSE(is_proxy_variable("YARN_NO_PROXY"));
}

// ssh expands `%` tokens in ProxyCommand (ssh_config(5), "TOKENS"): a `%` in pi-sandbox's path
// is written `%%`, the `%h %p` of the command are ssh's own.
TEST(ProxyEnvironment, APercentInThePathOfTheBinaryIsDoubledForSsh) {
  const auto env = proxy_environment("/opt/100%/pi-sandbox");
  const auto ssh = std::ranges::find_if(
      env, [](const std::string& e) { return e.starts_with("GIT_SSH_COMMAND="); });
  ASSERT_NE(ssh, env.end());
  EXPECT_EQ(*ssh,
            "GIT_SSH_COMMAND=ssh -o ControlMaster=no -o ControlPath=none -o "
            "ProxyCommand=''\\''/opt/100%%/pi-sandbox'\\'' proxy-connect %h %p'");
}

// macOS (docs/macos.md): the ports the kernel chose on the host's loopback and the per-command
// credential in every URL; gcloud gets it as its own two variables; Java only the port.
TEST(ProxyEnvironment, EndpointsWithACredential) {
  const ProxyEndpoints endpoints{51234, 51235, "pi-sandbox:0123456789abcdef0123456789abcdef"};
  const std::vector<std::string> env =
      proxy_environment("/usr/bin/pi-sandbox", std::nullopt, endpoints);
  const std::string http = "http://pi-sandbox:0123456789abcdef0123456789abcdef@127.0.0.1:51234";
  const std::string socks = "socks5h://pi-sandbox:0123456789abcdef0123456789abcdef@127.0.0.1:51235";
  const std::vector<std::string> linux_env = proxy_environment("/usr/bin/pi-sandbox");
  ASSERT_EQ(env.size(), linux_env.size() + 2);
  for (std::size_t i = 0; i < linux_env.size(); ++i) {
    std::string expected = linux_env[i];
    const auto replace = [&](std::string_view from, const std::string& to) {
      if (const auto at = expected.find(from); at != std::string::npos)
        expected.replace(at, from.size(), to);
    };
    replace(kHttpProxyUrl, http);
    replace(kSocksProxyUrl, socks);
    if (expected.starts_with("RSYNC_PROXY="))
      expected = "RSYNC_PROXY=pi-sandbox:0123456789abcdef0123456789abcdef@127.0.0.1:51234";
    if (expected.starts_with("CLOUDSDK_PROXY_PORT=")) expected = "CLOUDSDK_PROXY_PORT=51234";
    if (expected.starts_with("JAVA_TOOL_OPTIONS="))
      expected =
          "JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=51234 "
          "-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=51234 "
          "-Dhttp.nonProxyHosts=localhost|127.*|[::1]";
    EXPECT_EQ(env[i], expected);
  }
  EXPECT_EQ(env[linux_env.size()], "CLOUDSDK_PROXY_USERNAME=pi-sandbox");
  EXPECT_EQ(env[linux_env.size() + 1], "CLOUDSDK_PROXY_PASSWORD=0123456789abcdef0123456789abcdef");
  EXPECT_EQ(env[0], "HTTP_PROXY=" + http);
  EXPECT_EQ(env[13], "ALL_PROXY=" + socks);
  EXPECT_EQ(env[17], "NO_PROXY=localhost,127.0.0.1,::1");
  EXPECT_TRUE(is_proxy_variable("CLOUDSDK_PROXY_PASSWORD"));
  EXPECT_EQ(java_proxy_options({}), kJavaProxyOptions);
}

// What credential-helper and proxy-connect read back from HTTP_PROXY and ALL_PROXY: the URLs
// proxy_environment() writes, for Linux and for macOS's ports and credential.
TEST(LoopbackProxyUrl, ReadsBackWhatProxyEnvironmentWrites) {
  const auto http = loopback_proxy_from_url(kHttpProxyUrl, ProxyScheme::Http);
  ASSERT_TRUE(http.has_value());
  EXPECT_EQ(http->port, kLinuxHttpProxyPort);
  EXPECT_EQ(http->userinfo, "");
  const auto socks = loopback_proxy_from_url(kSocksProxyUrl, ProxyScheme::Socks5h);
  ASSERT_TRUE(socks.has_value());
  EXPECT_EQ(socks->port, kLinuxSocksProxyPort);
  EXPECT_EQ(socks->userinfo, "");
  const std::vector<std::string> env = proxy_environment(
      "/usr/bin/pi-sandbox", std::nullopt, {51234, 51235, "pi-sandbox:0123456789abcdef"});
  const auto value = [&](std::string_view name) {
    for (const auto& entry : env)
      if (entry.starts_with(std::string(name) + "=")) return entry.substr(name.size() + 1);
    return std::string();
  };
  const auto mac_http = loopback_proxy_from_url(value("HTTP_PROXY"), ProxyScheme::Http);
  ASSERT_TRUE(mac_http.has_value());
  EXPECT_EQ(mac_http->port, 51234);
  EXPECT_EQ(mac_http->userinfo, "pi-sandbox:0123456789abcdef");
  const auto mac_socks = loopback_proxy_from_url(value("ALL_PROXY"), ProxyScheme::Socks5h);
  ASSERT_TRUE(mac_socks.has_value());
  EXPECT_EQ(mac_socks->port, 51235);
  EXPECT_EQ(mac_socks->userinfo, "pi-sandbox:0123456789abcdef");
}

TEST(LoopbackProxyUrl, AcceptedShapes) {
  struct Case {
    std::string_view url;
    ProxyScheme scheme;
    std::uint16_t port;
    std::string_view userinfo;
  };
  for (const Case& c : {
           Case{"http://127.0.0.1:1", ProxyScheme::Http, 1, ""},
           Case{"http://127.0.0.1:65535", ProxyScheme::Http, 65535, ""},
           Case{"http://127.0.0.1:03128", ProxyScheme::Http, 3128, ""},
           Case{"http://127.0.0.1:3128/", ProxyScheme::Http, 3128, ""},
           Case{"http://u:p@127.0.0.1:8080", ProxyScheme::Http, 8080, "u:p"},
           Case{"http://u@127.0.0.1:8080", ProxyScheme::Http, 8080, "u"},
           Case{"http://@127.0.0.1:8080", ProxyScheme::Http, 8080, ""},
           // The last `@` ends the userinfo, as in an URL's authority (RFC 3986 section 3.2).
           Case{"http://a@b:c@127.0.0.1:8080", ProxyScheme::Http, 8080, "a@b:c"},
           Case{"socks5h://127.0.0.1:1080", ProxyScheme::Socks5h, 1080, ""},
           Case{"socks5h://u:p@127.0.0.1:40000", ProxyScheme::Socks5h, 40000, "u:p"},
       }) {
    const auto proxy = loopback_proxy_from_url(c.url, c.scheme);
    ASSERT_TRUE(proxy.has_value()) << c.url;
    EXPECT_EQ(proxy->port, c.port) << c.url;
    EXPECT_EQ(proxy->userinfo, c.userinfo) << c.url;
  }
}

TEST(LoopbackProxyUrl, RefusedShapes) {
  for (const std::string_view url : {"",
                                     "http://",
                                     "http://127.0.0.1",
                                     "http://127.0.0.1:",
                                     "http://127.0.0.1:/",
                                     "http://127.0.0.1:0",
                                     "http://127.0.0.1:65536",
                                     "http://127.0.0.1:123456",
                                     "http://127.0.0.1:+3128",
                                     "http://127.0.0.1:-1",
                                     "http://127.0.0.1: 3128",
                                     "http://127.0.0.1:3128//",
                                     "http://127.0.0.1:3128/x",
                                     "http://127.0.0.1:3128?",
                                     "http://localhost:3128",
                                     "http://[::1]:3128",
                                     "http://127.0.0.2:3128",
                                     "http://10.0.0.1:3128",
                                     "https://127.0.0.1:3128",
                                     "HTTP://127.0.0.1:3128",
                                     "socks5h://127.0.0.1:1080",
                                     "http://127.0.0.1:3128/@x",
                                     " http://127.0.0.1:3128",
                                     "http://127.0.0.1:3128 "})
    EXPECT_FALSE(loopback_proxy_from_url(url, ProxyScheme::Http).has_value()) << url;
  for (const std::string_view url :
       {"", "socks5h://", "socks5h://127.0.0.1:", "socks5h://127.0.0.1:0",
        "socks5h://127.0.0.1:65536", "socks5h://127.0.0.1:1080/", "socks5://127.0.0.1:1080",
        "socks5h://localhost:1080", "http://127.0.0.1:1080"})
    EXPECT_FALSE(loopback_proxy_from_url(url, ProxyScheme::Socks5h).has_value()) << url;
}

}  // namespace
