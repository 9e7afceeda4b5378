// pisandbox::proxy — the destination a sandboxed client asks for: its host name, normalised
// before any policy looks at it, and the `host:port` authority of an HTTP CONNECT.
//
// Source: docs/network.md, "Deciding a destination"; compatibility C37 (the
// normaliser of pi-sandbox 0.4.0) and C43 (the CONNECT target). IP literals in every spelling get
// the same decision.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace pisandbox::proxy {

/// The longest host name accepted, in characters of its ASCII form without the root dot
/// (RFC 1035 section 2.3.4, RFC 1123 section 2.1).
inline constexpr std::size_t kMaxHostLength = 253;
/// The longest label accepted, in characters (RFC 1035 section 2.3.4).
inline constexpr std::size_t kMaxLabelLength = 63;

/// Normalises a host name as a client sent it (docs/network.md, "Deciding a destination",
/// compatibility C37):
///   1. trims ASCII whitespace; refuses control characters and other bytes no host name
///      contains (NUL, `/`, `@`, ...);
///   2. refuses IPv6 literals in any spelling (`[::1]`, `::1`, `[::ffff:127.0.0.1]`,
///      `fe80::1%eth0`): anything with `[`, `]`, `:` or `%`;
///   3. lowercases ASCII, strips one trailing dot;
///   4. converts a name with non-ASCII characters to its ASCII form with libidn2 (IDNA 2008
///      with the UTS #46 non-transitional mapping: `bücher.example` → `xn--bcher-kva.example`,
///      full-width digits and dots map to ASCII ones);
///   5. refuses IPv4 literals in any inet_aton(3) spelling (`127.0.0.1`, `127.1`,
///      `2130706433`, `0x7f.1`, `0177.0.0.1`): a last label that is all digits, or `0x`
///      followed by hex digits;
///   6. refuses an empty name, one over kMaxHostLength characters, a single label (no dot:
///      `localhost`), and any label that is empty, over kMaxLabelLength characters or not
///      `^[a-z0-9]([a-z0-9-]*[a-z0-9])?$` (so `_` is refused).
/// Returns the normalised ASCII name, or a short English reason that completes "the host
/// ...", e.g. "is an IP address literal". Pure; never throws.
[[nodiscard]] std::expected<std::string, std::string> normalise_host(std::string_view host);

/// The `host:port` authority of a CONNECT request (RFC 9110 section 9.3.6, RFC 9112
/// section 3.2.3).
///   host: the text before the port, unchanged (not yet normalised); an IPv6 literal keeps
///         its brackets (`[::1]`), so normalise_host() refuses it.
///   port: 1-65535.
struct Authority {
  std::string host;
  std::uint16_t port = 0;

  friend bool operator==(const Authority&, const Authority&) = default;
};

/// Parses a TCP port: 1 to 5 ASCII digits with a value of 1-65535 (leading zeros allowed,
/// as RFC 3986 section 3.2.3 allows them). Returns the port or a short reason.
[[nodiscard]] std::expected<std::uint16_t, std::string> parse_port(std::string_view text);

/// Splits an authority `host:port` or `[v6]:port` (compatibility C43). The port is
/// required. Errors (short reasons, answered with 400 by the HTTP proxy): "has no port",
/// "has an empty host", "has an unterminated '['", a parse_port() reason, "has user
/// information" (an `@`). Pure; never throws.
[[nodiscard]] std::expected<Authority, std::string> parse_authority(std::string_view text);

}  // namespace pisandbox::proxy
