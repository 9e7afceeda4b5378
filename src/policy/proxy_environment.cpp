#include "policy/proxy_environment.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace pisandbox::policy {

namespace {

constexpr std::string_view kLoopback = "localhost,127.0.0.1,::1";

/// Every variable's name, in the order proxy_environment() sets them.
constexpr std::array<std::string_view, 28> kNames = {
    "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "GRPC_PROXY", "grpc_proxy",
    "npm_config_proxy", "npm_config_https_proxy", "DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY",
    "GLOBAL_AGENT_HTTP_PROXY",
    // Yarn 2 and later read no HTTP_PROXY: its httpProxy/httpsProxy settings, as variables.
    // (No YARN_NO_PROXY: Yarn has no such setting and refuses unknown YARN_ variables.)
    "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "ALL_PROXY", "all_proxy", "FTP_PROXY", "ftp_proxy",
    "NO_PROXY", "no_proxy", "npm_config_noproxy", "RSYNC_PROXY", "NODE_USE_ENV_PROXY",
    // @electron/get (Electron's binary download at `npm install`) uses global-agent, fed from
    // HTTPS_PROXY, only when this is set.
    "ELECTRON_GET_USE_PROXY", "CLOUDSDK_PROXY_TYPE", "CLOUDSDK_PROXY_ADDRESS",
    "CLOUDSDK_PROXY_PORT", "GIT_SSH_COMMAND", "JAVA_TOOL_OPTIONS"};

/// gcloud's proxy credential (its proxy/username and proxy/password properties), set only when
/// the proxy has one.
constexpr std::array<std::string_view, 2> kCloudSdkCredential = {"CLOUDSDK_PROXY_USERNAME",
                                                                 "CLOUDSDK_PROXY_PASSWORD"};

/// Quotes `text` for a POSIX shell (ssh runs ProxyCommand with the user's shell).
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// `%` doubled: ssh expands `%` tokens in ProxyCommand (ssh_config(5), "TOKENS"), so a path
/// with a `%` must say `%%`.
std::string percent_escaped(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '%' ? std::string("%%") : std::string(1, c);
  return out;
}

bool is_blank(std::string_view text) {
  return text.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

}  // namespace

std::string java_proxy_options(const ProxyEndpoints& endpoints) {
  const std::string http = std::to_string(endpoints.http_port);
  return "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + http +
         " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + http +
         " -Dhttp.nonProxyHosts=localhost|127.*|[::1]";
}

std::string java_tool_options(std::optional<std::string_view> caller_value,
                              const ProxyEndpoints& endpoints) {
  const std::string own = java_proxy_options(endpoints);
  if (!caller_value || is_blank(*caller_value)) return own;
  return std::string(*caller_value) + " " + own;
}

std::vector<std::string> proxy_environment(const std::filesystem::path& self_exe,
                                           std::optional<std::string_view> caller_java_tool_options,
                                           const ProxyEndpoints& endpoints) {
  const std::string credential = endpoints.userinfo.empty() ? "" : endpoints.userinfo + "@";
  const std::string http_port = std::to_string(endpoints.http_port);
  const std::string http_url = "http://" + credential + "127.0.0.1:" + http_port;
  const std::string socks_url =
      "socks5h://" + credential + "127.0.0.1:" + std::to_string(endpoints.socks_port);
  std::vector<std::string> env;
  for (const std::string_view name : kNames) {
    std::string value;
    if (name == "GIT_SSH_COMMAND")
      // The ProxyCommand is parsed by ssh's shell: the path is quoted, and inside the quoted
      // -o argument ssh's own %h %p expansion gives the host and port. proxy-connect finds the
      // SOCKS5 listener and its credential in ALL_PROXY.
      value = "ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand=" +
              shell_quote(shell_quote(percent_escaped(self_exe.string())) + " proxy-connect %h %p");
    else if (name == "JAVA_TOOL_OPTIONS")
      value = java_tool_options(caller_java_tool_options, endpoints);
    else if (name == "NODE_USE_ENV_PROXY")
      value = "1";
    else if (name == "ELECTRON_GET_USE_PROXY")
      value = "true";
    else if (name == "CLOUDSDK_PROXY_TYPE")
      value = "http";
    else if (name == "CLOUDSDK_PROXY_ADDRESS")
      value = "127.0.0.1";
    else if (name == "CLOUDSDK_PROXY_PORT")
      value = http_port;
    else if (name == "NO_PROXY" || name == "no_proxy" || name == "npm_config_noproxy")
      value = std::string(kLoopback);
    else if (name == "RSYNC_PROXY")  // rsync(1): [user:pass@]host:port
      value = credential + "127.0.0.1:" + http_port;
    else if (name.starts_with("ALL_") || name.starts_with("all_") || name.starts_with("FTP_") ||
             name.starts_with("ftp_"))
      value = socks_url;
    else if (name.ends_with("_PROXY") || name.ends_with("_proxy"))
      value = http_url;
    env.push_back(std::string(name) + "=" + value);
  }
  if (!endpoints.userinfo.empty()) {
    const std::size_t colon = endpoints.userinfo.find(':');
    env.push_back(std::string(kCloudSdkCredential[0]) + "=" + endpoints.userinfo.substr(0, colon));
    env.push_back(std::string(kCloudSdkCredential[1]) + "=" +
                  (colon == std::string::npos ? "" : endpoints.userinfo.substr(colon + 1)));
  }
  return env;
}

std::optional<LoopbackProxy> loopback_proxy_from_url(std::string_view url, ProxyScheme scheme) {
  const std::string_view prefix = scheme == ProxyScheme::Http ? "http://" : "socks5h://";
  if (!url.starts_with(prefix)) return std::nullopt;
  url.remove_prefix(prefix.size());
  std::string_view userinfo;
  if (const auto at = url.rfind('@'); at != std::string_view::npos) {
    userinfo = url.substr(0, at);
    url.remove_prefix(at + 1);
  }
  constexpr std::string_view kHost = "127.0.0.1:";
  if (!url.starts_with(kHost)) return std::nullopt;
  url.remove_prefix(kHost.size());
  if (scheme == ProxyScheme::Http && url.ends_with('/')) url.remove_suffix(1);
  if (url.empty() || url.size() > 5 ||
      url.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  const int port = std::stoi(std::string(url));
  if (port < 1 || port > 65535) return std::nullopt;
  return LoopbackProxy{static_cast<std::uint16_t>(port), std::string(userinfo)};
}

bool is_proxy_variable(std::string_view name) {
  return std::ranges::find(kNames, name) != kNames.end() ||
         std::ranges::find(kCloudSdkCredential, name) != kCloudSdkCredential.end();
}

}  // namespace pisandbox::policy
