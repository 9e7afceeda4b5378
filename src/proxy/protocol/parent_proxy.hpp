// pisandbox::proxy — the parent (company) proxy that pi-sandbox itself was given: its URL as
// read from pi-sandbox's own environment (`https_proxy`, `HTTP_PROXY`, `ALL_PROXY`, ...), the
// `NO_PROXY` list, which of them a destination goes through, the CONNECT request sent to the
// parent and its `Proxy-Authorization` header. Pure: no sockets, no environment access.
//
// Sources: docs/network.md, "A parent proxy" (pi-sandbox's own HTTP(S)_PROXY/NO_PROXY name the
// parent); RFC 9110 section 9.3.6 (CONNECT) and section 11.7.2
// (Proxy-Authorization); RFC 7617 (Basic); RFC 3986 section 3.2 (authority, percent-encoding);
// curl's libcurl-env(3) for the variable names, their precedence and NO_PROXY's matching.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::proxy {

/// The port of a parent proxy URL without one: 1080, as curl assumes (curl(1), `--proxy`).
inline constexpr std::uint16_t kDefaultParentPort = 1080;

/// One usable parent proxy.
///   host:     the parent's host name or IP address, lowercase, IPv6 without brackets. It is
///             resolved and connected to as given: the parent is trusted configuration, so a
///             private or loopback address is expected and allowed.
///   port:     1-65535 (kDefaultParentPort when the URL has none).
///   user, password: percent-decoded (RFC 3986 section 2.1); present only when the URL has
///             user information (`http://user:pass@host:port`). Never printed or logged.
struct ParentProxy {
  std::string host;
  std::uint16_t port = kDefaultParentPort;
  std::optional<std::string> user;
  std::string password;

  /// `http://host:port` (IPv6 in brackets), never the credentials.
  [[nodiscard]] std::string display() const;
  /// The value of `Proxy-Authorization` (RFC 7617 section 2): `Basic ` and the base64 of
  /// `user:password`; empty without credentials.
  [[nodiscard]] std::string authorization() const;
  /// The request sent to the parent to reach `host:port` (RFC 9110 section 9.3.6): `CONNECT
  /// host:port HTTP/1.1`, `Host: host:port`, `Proxy-Authorization` when there are
  /// credentials, and the empty line. `host` must be a normalised host name
  /// (normalise_host()).
  [[nodiscard]] std::string connect_request(std::string_view host, std::uint16_t port) const;
};

/// Parses a parent proxy URL the way curl reads its proxy variables: `[http://][user[:password]@]
/// host[:port][/...]`. Surrounding whitespace is trimmed; the scheme is case-insensitive and
/// only `http` is supported (a TLS or SOCKS parent is not); a missing scheme means `http`;
/// a path is ignored; a missing port is kDefaultParentPort; user and password are
/// percent-decoded. The host is a name (letters, digits, `-`, `.`, `_`) or an IPv4 or bracketed
/// IPv6 address. Errors (short English reasons that complete "the parent proxy URL ..."):
/// "is empty", "uses the scheme X; only http:// parent proxies are supported", "has no host",
/// "has a bad host", a parse_port() reason, "has a bad percent-encoding in its user
/// information". Never throws.
[[nodiscard]] std::expected<ParentProxy, std::string> parse_parent_proxy_url(std::string_view url);

/// A NO_PROXY list (curl's semantics, libcurl-env(3) and CURLOPT_NOPROXY): entries separated
/// by commas or whitespace; `*` matches every host; otherwise an entry is a domain that
/// matches itself and every name below it, with or without a leading `.` (and, as in Go,
/// `*.`), case-insensitively, a trailing dot ignored. Entries that are IP addresses, CIDR
/// ranges or carry a port (`10.0.0.0/8`, `::1`, `host:8080`) are kept in `ignored`: a
/// destination of the per-command proxy is always a host name (IP literals are refused), so
/// they never match one. Non-ASCII entries are converted like destinations (IDNA).
class NoProxy {
 public:
  NoProxy() = default;
  /// Parses the variable's value. Never fails: every entry is either used or ignored.
  [[nodiscard]] static NoProxy parse(std::string_view list);

  /// Whether `host` (a normalised host name, normalise_host()) goes directly.
  [[nodiscard]] bool matches(std::string_view host) const;

  /// Every host (an entry `*`).
  [[nodiscard]] bool all() const { return all_; }
  /// The domains in use, normalised, in order.
  [[nodiscard]] const std::vector<std::string>& domains() const { return domains_; }
  /// The entries that can never match, as written.
  [[nodiscard]] const std::vector<std::string>& ignored() const { return ignored_; }

 private:
  bool all_ = false;
  std::vector<std::string> domains_;
  std::vector<std::string> ignored_;
};

/// One parent proxy setting: the variable it came from and the proxy, or why its value
/// cannot be used (then every destination that would go through it fails with that reason,
/// never directly: the machine's configuration says the network is behind it).
struct ParentSetting {
  std::string variable;
  std::expected<ParentProxy, std::string> proxy;
};

/// How a destination is reached: a tunnel (HTTP CONNECT or SOCKS5 CONNECT from the client)
/// or a plain `http://` request (absolute-form). Picks which variable's parent applies.
enum class ParentUse { Tunnel, PlainHttp };

/// The parent proxies pi-sandbox was started with.
///   tunnel: for CONNECT and SOCKS5: the first non-empty of `https_proxy`, `HTTPS_PROXY`,
///           `all_proxy`, `ALL_PROXY`.
///   plain:  for absolute-form `http://` requests: the first non-empty of `http_proxy`,
///           `HTTP_PROXY`, `all_proxy`, `ALL_PROXY`.
///   no_proxy, no_proxy_variable: the first non-empty of `no_proxy`, `NO_PROXY`, and its name
///           (empty when neither is set).
/// Lowercase before uppercase, as curl reads them (curl reads no uppercase `HTTP_PROXY`, for
/// CGI's sake; pi-sandbox is no CGI program and reads it after `http_proxy`).
struct ParentProxies {
  std::optional<ParentSetting> tunnel;
  std::optional<ParentSetting> plain;
  NoProxy no_proxy;
  std::string no_proxy_variable;

  /// The setting a destination `host` (normalised) reached by `use` goes through, or nullptr
  /// when it goes directly (no parent for `use`, or NO_PROXY matches). The pointer is valid as
  /// long as this object.
  [[nodiscard]] const ParentSetting* route(std::string_view host, ParentUse use) const;
  /// Whether any parent is configured.
  [[nodiscard]] bool any() const { return tunnel.has_value() || plain.has_value(); }
};

/// Reads the parent proxies from an environment: `NAME=value` entries, as in `environ`; the
/// first entry of a name counts. Empty values count as unset.
[[nodiscard]] ParentProxies parent_proxies_from_environment(std::span<const std::string> env);

}  // namespace pisandbox::proxy
