// pisandbox::policy — the variables that point a command's tools at the per-command proxy
// (pure: no syscalls, no I/O).
//
// Source: docs/network.md ("Environment of the command", one row per tool family, with the
// tools that ignore HTTP_PROXY but have a standard knob of their own). On Linux the proxy
// listens inside the sandbox on 127.0.0.1:3128 (HTTP) and 127.0.0.1:1080 (SOCKS5); on macOS on
// the host's loopback at ports of its own, with a per-command credential (docs/macos.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// The proxy's ports inside the Linux sandbox's network namespace (docs/network.md, "The
/// bridge"); sandbox/linux/launch_spec.hpp listens on them.
inline constexpr std::uint16_t kLinuxHttpProxyPort = 3128;
inline constexpr std::uint16_t kLinuxSocksProxyPort = 1080;

/// The proxy's addresses as the command's tools are given them on Linux (ProxyEndpoints{}).
inline constexpr std::string_view kHttpProxyUrl = "http://127.0.0.1:3128";
inline constexpr std::string_view kSocksProxyUrl = "socks5h://127.0.0.1:1080";

/// Where the command's proxy listens and what its clients present.
///   http_port, socks_port: on 127.0.0.1 (1-65535). Linux: 3128 and 1080 inside the command's
///     network namespace; macOS: the ports the kernel chose on the host's loopback.
///   userinfo: `username:password` of the per-command credential (proxy/protocol/credential.hpp;
///     characters that need no percent-encoding), empty for none (Linux).
struct ProxyEndpoints {
  std::uint16_t http_port = kLinuxHttpProxyPort;
  std::uint16_t socks_port = kLinuxSocksProxyPort;
  std::string userinfo;
};

/// The Java system properties that send a JVM's HTTP and HTTPS through the proxy and keep its
/// loopback direct (the JDK's networking properties http.proxyHost, http.proxyPort,
/// https.proxyHost, https.proxyPort and http.nonProxyHosts, which https uses as well),
/// separated by single spaces, for ProxyEndpoints{}. The JDK has no property for a proxy's
/// credential (it needs an Authenticator, and refuses Basic for HTTPS tunnels by default:
/// jdk.http.auth.tunneling.disabledSchemes), so on macOS a JVM's connections get 407
/// (docs/macos.md).
inline constexpr std::string_view kJavaProxyOptions =
    "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 "
    "-Dhttps.proxyPort=3128 -Dhttp.nonProxyHosts=localhost|127.*|[::1]";

/// kJavaProxyOptions with `endpoints.http_port`.
[[nodiscard]] std::string java_proxy_options(const ProxyEndpoints& endpoints);

/// `JAVA_TOOL_OPTIONS` for the command: the caller's value (when it has one and it is not
/// blank), a space, then java_proxy_options(), so that the proxy's properties win (the JVM reads
/// the options in order; a later `-D` of the same property replaces an earlier one).
[[nodiscard]] std::string java_tool_options(std::optional<std::string_view> caller_value,
                                            const ProxyEndpoints& endpoints = {});

/// The `NAME=value` entries that point common tools at the proxy, in the order of
/// docs/network.md, with H = `http://[userinfo@]127.0.0.1:<http_port>` and S =
/// `socks5h://[userinfo@]127.0.0.1:<socks_port>`: HTTP_PROXY, HTTPS_PROXY, http_proxy,
/// https_proxy, GRPC_PROXY, grpc_proxy, npm_config_proxy, npm_config_https_proxy,
/// DOCKER_HTTP_PROXY, DOCKER_HTTPS_PROXY, GLOBAL_AGENT_HTTP_PROXY, YARN_HTTP_PROXY,
/// YARN_HTTPS_PROXY = H; ALL_PROXY, all_proxy, FTP_PROXY, ftp_proxy = S; NO_PROXY, no_proxy,
/// npm_config_noproxy = `localhost,127.0.0.1,::1`; RSYNC_PROXY =
/// `[userinfo@]127.0.0.1:<http_port>`; NODE_USE_ENV_PROXY=1; ELECTRON_GET_USE_PROXY=true;
/// CLOUDSDK_PROXY_TYPE/ADDRESS/PORT = http, 127.0.0.1, <http_port>; GIT_SSH_COMMAND = `ssh -o
/// ControlMaster=no -o ControlPath=none -o ProxyCommand='<self_exe> proxy-connect %h %p'`;
/// JAVA_TOOL_OPTIONS = java_tool_options(); and with a userinfo, CLOUDSDK_PROXY_USERNAME and
/// CLOUDSDK_PROXY_PASSWORD last. With ProxyEndpoints{} this is exactly the Linux list of
/// docs/network.md.
///   self_exe: pi-sandbox's own absolute path (visible read-only inside the sandbox).
///   caller_java_tool_options: the caller's JAVA_TOOL_OPTIONS, merged (the only merged one).
[[nodiscard]] std::vector<std::string> proxy_environment(
    const std::filesystem::path& self_exe,
    std::optional<std::string_view> caller_java_tool_options = std::nullopt,
    const ProxyEndpoints& endpoints = {});

/// The scheme of a proxy URL the command's tools are given: `http://` (HTTP_PROXY and the other
/// H variables of proxy_environment()) or `socks5h://` (ALL_PROXY and the other S variables).
enum class ProxyScheme { Http, Socks5h };

/// A proxy listener on the loopback, as a proxy URL names it.
///   port: on 127.0.0.1 (1-65535).
///   userinfo: everything between the scheme and the last `@` (`username:password` as
///     proxy_environment() writes it), unsplit and not percent-decoded; empty for none.
struct LoopbackProxy {
  std::uint16_t port = 0;
  std::string userinfo;
};

/// `url` read back when it has exactly the shape proxy_environment() gives it:
/// `<scheme>[userinfo@]127.0.0.1:PORT`, PORT 1 to 5 decimal digits with a value of 1-65535;
/// for ProxyScheme::Http one `/` after the port (the root path, `http://127.0.0.1:3128/`) is
/// accepted as well. Anything else (another scheme or host, `localhost`, IPv6, a path, a port
/// of 0, above 65535 or with a sign) gives std::nullopt, so the caller falls back to the Linux
/// sandbox's fixed port (kLinuxHttpProxyPort, kLinuxSocksProxyPort; docs/network.md, "The
/// bridge"). The inside-sandbox commands `credential-helper` (HTTP_PROXY) and `proxy-connect`
/// (ALL_PROXY) find the command's proxy with it (docs/macos.md: the ports and credential differ
/// per command there).
[[nodiscard]] std::optional<LoopbackProxy> loopback_proxy_from_url(std::string_view url,
                                                                   ProxyScheme scheme);

/// Whether `name` is one of the variables proxy_environment() sets (exact spelling), so that
/// the caller's own value is replaced (JAVA_TOOL_OPTIONS: merged).
[[nodiscard]] bool is_proxy_variable(std::string_view name);

}  // namespace pisandbox::policy
