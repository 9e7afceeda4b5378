// pisandbox::proxy — the per-command proxy credential (docs/macos.md, "The proxy on the host's
// loopback"): where the proxy listens on the host's own loopback (macOS has no network namespace
// to hide it in), every client must present this credential, or any local process could use the
// command's proxy and its approvals. HTTP clients send it as `Proxy-Authorization: Basic`
// (RFC 9110 section 11.7.1, RFC 7617); SOCKS5 clients with the username/password method
// (RFC 1929). On Linux the listeners are inside the command's network namespace and carry none.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "proxy/protocol/http.hpp"

namespace pisandbox::proxy {

/// A username and password, each 1-255 bytes (RFC 1929 limits both to 255), of characters
/// that need no percent-encoding in a URL's userinfo (RFC 3986 section 3.2.1: generate_credential()
/// gives `pi-sandbox` and 32 lowercase hexadecimal digits).
struct ProxyCredential {
  std::string username;
  std::string password;

  friend bool operator==(const ProxyCredential&, const ProxyCredential&) = default;
};

/// The username of every generated credential.
inline constexpr std::string_view kCredentialUsername = "pi-sandbox";

/// A fresh credential: kCredentialUsername and a password of 16 random bytes
/// (core::random_bytes(), getentropy(3)) as 32 lowercase hexadecimal digits. Throws
/// std::runtime_error when the random source fails (fail closed: no proxy without a credential).
[[nodiscard]] ProxyCredential generate_credential();

/// `username:password`, the userinfo of the proxy URLs the command gets (no escaping: see
/// ProxyCredential).
[[nodiscard]] std::string userinfo(const ProxyCredential& credential);

/// Base64 with padding (RFC 4648 section 4).
[[nodiscard]] std::string base64(std::string_view bytes);

/// Whether `a` and `b` are equal, in a time that depends on their lengths only (a mismatch at
/// the first byte costs as much as one at the last).
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b);

/// Whether a request's header fields carry `credential`: exactly one `Proxy-Authorization`
/// field (name in any case), whose value is the scheme `Basic` (any case, RFC 9110 section
/// 11.1), one or more spaces, and the base64 of `username:password` exactly (RFC 7617 section 2;
/// the canonical padded encoding that curl, Node.js, Python and Go send). Anything else,
/// including two fields, is false.
[[nodiscard]] bool proxy_authorization_matches(const std::vector<Header>& headers,
                                               const ProxyCredential& credential);

/// The answer to an HTTP request without the credential (RFC 9110 section 15.5.8): `407 Proxy
/// Authentication Required`, `Proxy-Authenticate: Basic realm="pi-sandbox"`, a one-line text
/// body, and `Connection: close`.
[[nodiscard]] std::string proxy_authentication_required_response();

}  // namespace pisandbox::proxy
