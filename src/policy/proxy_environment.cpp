#include "policy/proxy_environment.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace pisandbox::policy {

namespace {

constexpr std::string_view kLoopback = "localhost,127.0.0.1,::1";

/// Every variable and its value, but GIT_SSH_COMMAND and JAVA_TOOL_OPTIONS (built per command).
constexpr std::array<std::pair<std::string_view, std::string_view>, 28> kFixed = {{
    {"HTTP_PROXY", kHttpProxyUrl},
    {"HTTPS_PROXY", kHttpProxyUrl},
    {"http_proxy", kHttpProxyUrl},
    {"https_proxy", kHttpProxyUrl},
    {"GRPC_PROXY", kHttpProxyUrl},
    {"grpc_proxy", kHttpProxyUrl},
    {"npm_config_proxy", kHttpProxyUrl},
    {"npm_config_https_proxy", kHttpProxyUrl},
    {"DOCKER_HTTP_PROXY", kHttpProxyUrl},
    {"DOCKER_HTTPS_PROXY", kHttpProxyUrl},
    {"GLOBAL_AGENT_HTTP_PROXY", kHttpProxyUrl},
    // Yarn 2 and later read no HTTP_PROXY: its httpProxy/httpsProxy settings, as variables.
    // (No YARN_NO_PROXY: Yarn has no such setting and refuses unknown YARN_ variables.)
    {"YARN_HTTP_PROXY", kHttpProxyUrl},
    {"YARN_HTTPS_PROXY", kHttpProxyUrl},
    {"ALL_PROXY", kSocksProxyUrl},
    {"all_proxy", kSocksProxyUrl},
    {"FTP_PROXY", kSocksProxyUrl},
    {"ftp_proxy", kSocksProxyUrl},
    {"NO_PROXY", kLoopback},
    {"no_proxy", kLoopback},
    {"npm_config_noproxy", kLoopback},
    {"RSYNC_PROXY", "127.0.0.1:3128"},
    {"NODE_USE_ENV_PROXY", "1"},
    // @electron/get (Electron's binary download at `npm install`) uses global-agent, fed from
    // HTTPS_PROXY, only when this is set.
    {"ELECTRON_GET_USE_PROXY", "true"},
    {"CLOUDSDK_PROXY_TYPE", "http"},
    {"CLOUDSDK_PROXY_ADDRESS", "127.0.0.1"},
    {"CLOUDSDK_PROXY_PORT", "3128"},
    {"GIT_SSH_COMMAND", ""},
    {"JAVA_TOOL_OPTIONS", ""},
}};

/// Quotes `text` for a POSIX shell (ssh runs ProxyCommand with the user's shell).
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

}  // namespace

std::string java_tool_options(std::optional<std::string_view> caller_value) {
  if (!caller_value || is_blank(*caller_value)) return std::string(kJavaProxyOptions);
  return std::string(*caller_value) + " " + std::string(kJavaProxyOptions);
}

std::vector<std::string> proxy_environment(
    const std::filesystem::path& self_exe,
    std::optional<std::string_view> caller_java_tool_options) {
  std::vector<std::string> env;
  for (const auto& [name, value] : kFixed) {
    std::string entry = std::string(name) + "=";
    if (name == "GIT_SSH_COMMAND")
      // The ProxyCommand is parsed by ssh's shell: the path is quoted, and inside the quoted
      // -o argument ssh's own %h %p expansion gives the host and port.
      entry += "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand=" +
               shell_quote(shell_quote(self_exe.string()) + " proxy-connect %h %p");
    else if (name == "JAVA_TOOL_OPTIONS")
      entry += java_tool_options(caller_java_tool_options);
    else
      entry += value;
    env.push_back(std::move(entry));
  }
  return env;
}

bool is_proxy_variable(std::string_view name) {
  return std::ranges::any_of(kFixed, [&](const auto& known) { return known.first == name; });
}

}  // namespace pisandbox::policy
