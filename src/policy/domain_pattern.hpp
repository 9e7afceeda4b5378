// pisandbox::policy — network domain patterns of the trusted configuration (pure).
//
// Source: compatibility C10–C12 (`network.allowedDomains` / `deniedDomains`),
// docs/configuration.md, docs/cases.md C-05 (the port is part of the destination), C-07 (domain
// pattern semantics) and C-09 (`unix://` entries are configuration errors).
//
// Grammar of an entry (after trimming ASCII whitespace and lowercasing ASCII letters):
//
//   entry    = host [ ":" port ]
//   host     = domain | "*." domain | "*"          ; "*" only in deniedDomains
//   domain   = label *( "." label ) [ "." ]         ; at least two labels; one trailing dot
//                                                   ; is removed
//   label    = 1*63( a-z / 0-9 / "-" ), not starting or ending with "-"
//   port     = 1-65535 in decimal, no leading zero
//
// A domain is at most 253 characters, and its last label is neither all digits nor `0x`
// followed by hex digits, so no IPv4 literal (`127.0.0.1`, `127.1`, `1.0x7f`) passes.
// Schemes (`https://`, `unix://`), paths, queries, fragments, user info, bracketed or bare
// IPv6 literals and single-label names (`localhost`) are rejected.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pisandbox::policy {

/// Which configuration list an entry comes from: a bare `*` (or `*:port`) is accepted only
/// in `network.deniedDomains` (compatibility C10).
enum class ListKind { Allowed, Denied };

/// One validated, canonical domain pattern.
///
/// Matching (docs/cases.md, C-07): an exact pattern `example.com` matches the host `example.com`
/// only;
/// `*.example.com` matches strict subdomains (`a.example.com`, `a.b.example.com`), never the
/// apex `example.com`, nor `notexample.com`, nor `example.com.evil.test`; `*` matches every
/// host. A pattern without a port matches every port; with `:port`, only that port (docs/cases.md,
/// C-05).
class DomainPattern {
 public:
  /// What the host part of the pattern is.
  enum class Kind {
    Exact,       ///< `example.com`
    Subdomains,  ///< `*.example.com`: strict subdomains of domain()
    Any,         ///< `*`: every host (deniedDomains only)
  };

  /// Validates and canonicalises one configuration entry.
  ///   entry: the string as written in the configuration; trimmed and lowercased here.
  ///   list:  the list the entry belongs to (a bare `*` is only valid in ListKind::Denied).
  /// Returns the pattern, or a short English reason (e.g. "has a scheme") that completes the
  /// sentence "the entry ...", for a configuration hint. Never throws.
  static std::expected<DomainPattern, std::string> parse(std::string_view entry, ListKind list);

  /// Whether a destination matches the pattern.
  ///   host: the destination host name as the client sent it; compared ASCII
  ///     case-insensitively, one trailing dot ignored. A host that is not a plain DNS name
  ///     (characters other than letters, digits, `-`, `_`, `.`, or an empty label) matches
  ///     only Kind::Any patterns.
  ///   port: the destination TCP port.
  [[nodiscard]] bool matches(std::string_view host, std::uint16_t port) const;

  /// The canonical text: `example.com`, `*.example.com:443`, `*`, `*:8080`. Parsing it again
  /// (with the same ListKind) yields an equal pattern.
  [[nodiscard]] std::string text() const;

  /// The kind of host part.
  [[nodiscard]] Kind kind() const { return kind_; }
  /// The domain: lowercased, no trailing dot; without the `*.` of Kind::Subdomains; empty for
  /// Kind::Any.
  [[nodiscard]] const std::string& domain() const { return domain_; }
  /// The port (1-65535), or nullopt when the pattern matches every port.
  [[nodiscard]] std::optional<std::uint16_t> port() const { return port_; }

  friend bool operator==(const DomainPattern&, const DomainPattern&) = default;

 private:
  DomainPattern(Kind kind, std::string domain, std::optional<std::uint16_t> port)
      : kind_(kind), domain_(std::move(domain)), port_(port) {}

  Kind kind_;
  std::string domain_;
  std::optional<std::uint16_t> port_;
};

}  // namespace pisandbox::policy
