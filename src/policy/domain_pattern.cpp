#include "policy/domain_pattern.hpp"

#include <algorithm>
#include <cstddef>

#include "core/ascii.hpp"

namespace pisandbox::policy {
namespace {

// RFC 1035 section 2.3.4 (labels of at most 63 octets) and RFC 1123 section 2.1 (a name of
// at most 253 characters in text form, without the root dot).
constexpr std::size_t kMaxLabelLength = 63;
constexpr std::size_t kMaxDomainLength = 253;

using Reason = std::unexpected<std::string>;

using core::is_digit;
using core::is_hex_digit;
using core::is_space;
using core::lowercase;
using core::to_lower;
using core::trim;

using core::is_label_char;

// Rejects the shapes users write when they mean a URL or an address rather than a host
// (docs/cases.md, C-07, C-09), before the generic character check, so the reason names the mistake.
std::optional<std::string> url_or_address_reason(std::string_view entry) {
  if (entry.find("://") != std::string_view::npos) return "has a scheme (like https:// or unix://)";
  if (entry.find('/') != std::string_view::npos) return "has a path";
  if (entry.find('?') != std::string_view::npos) return "has a query";
  if (entry.find('#') != std::string_view::npos) return "has a fragment";
  if (entry.find('@') != std::string_view::npos) return "has user information";
  if (entry.find('[') != std::string_view::npos || entry.find(']') != std::string_view::npos) {
    return "is an IP literal";
  }
  if (std::ranges::count(entry, ':') > 1) return "is an IPv6 literal or has a misplaced port";
  return std::nullopt;
}

// `port` = 1-65535 in decimal without a leading zero (compatibility C10).
std::expected<std::uint16_t, std::string> parse_port(std::string_view text) {
  if (text.empty()) return Reason("has an empty port");
  if (text.size() > 5 || !std::ranges::all_of(text, is_digit)) {
    return Reason("has a port that is not a number between 1 and 65535");
  }
  if (text.front() == '0') return Reason("has a port with a leading zero or port 0");
  unsigned value = 0;
  for (char c : text) value = value * 10 + static_cast<unsigned>(c - '0');
  if (value > 65535) return Reason("has a port that is not a number between 1 and 65535");
  return static_cast<std::uint16_t>(value);
}

std::optional<std::string> label_reason(std::string_view label) {
  if (label.empty()) return "has an empty label";
  if (label.size() > kMaxLabelLength) return "has a label longer than 63 characters";
  if (!std::ranges::all_of(label, is_label_char)) {
    return "has a character other than a-z, 0-9, '-' and '.'";
  }
  if (label.front() == '-' || label.back() == '-')
    return "has a label that starts or ends with '-'";
  return std::nullopt;
}

// The last label of an IPv4 literal in any inet_aton(3) spelling is decimal, octal (also
// all digits) or `0x` hex; no top-level domain looks like that (RFC 3696 section 2).
bool looks_numeric(std::string_view label) {
  if (std::ranges::all_of(label, is_digit)) return true;
  return label.size() >= 2 && label.substr(0, 2) == "0x" &&
         std::ranges::all_of(label.substr(2), is_hex_digit);
}

// Validates a domain without the `*.` and without the trailing dot.
std::optional<std::string> domain_reason(std::string_view domain) {
  if (domain.empty()) return "has no domain";
  if (domain.size() > kMaxDomainLength) return "has a domain longer than 253 characters";
  std::string_view last_label;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = domain.find('.', start);
    const std::string_view label =
        domain.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (auto reason = label_reason(label)) return reason;
    last_label = label;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (domain.find('.') == std::string_view::npos) {
    return "has no '.' (single-label names like localhost are not accepted)";
  }
  if (looks_numeric(last_label)) return "is an IP address";
  return std::nullopt;
}

// Host names as clients send them may carry `_` (service labels); anything else outside
// the DNS alphabet makes the host unmatchable by a named pattern.
bool is_plain_host(std::string_view host) {
  if (host.empty()) return false;
  std::size_t label_length = 0;
  for (char c : host) {
    const char lower = to_lower(c);
    if (lower == '.') {
      if (label_length == 0) return false;
      label_length = 0;
    } else if (is_label_char(lower) || lower == '_') {
      ++label_length;
    } else {
      return false;
    }
  }
  return label_length > 0;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::ranges::equal(a, b, [](char x, char y) { return to_lower(x) == to_lower(y); });
}

}  // namespace

std::expected<DomainPattern, std::string> DomainPattern::parse(std::string_view entry,
                                                               ListKind list) {
  const std::string text = lowercase(trim(entry));
  if (text.empty()) return Reason("is empty");
  if (auto reason = url_or_address_reason(text)) return Reason(*reason);

  std::string_view host = text;
  std::optional<std::uint16_t> port;
  if (const std::size_t colon = host.find(':'); colon != std::string_view::npos) {
    auto parsed = parse_port(host.substr(colon + 1));
    if (!parsed) return Reason(parsed.error());
    port = *parsed;
    host = host.substr(0, colon);
    if (host.empty()) return Reason("has a port but no host");
  }

  if (host == "*") {
    if (list == ListKind::Allowed) return Reason("is a bare '*', which only deniedDomains accepts");
    return DomainPattern(Kind::Any, std::string(), port);
  }
  Kind kind = Kind::Exact;
  if (host.starts_with("*.")) {
    kind = Kind::Subdomains;
    host.remove_prefix(2);
  }
  if (host.find('*') != std::string_view::npos) {
    return Reason("has a '*' other than a leading '*.' or a bare '*'");
  }
  if (host.ends_with('.')) host.remove_suffix(1);
  if (auto reason = domain_reason(host)) return Reason(*reason);
  return DomainPattern(kind, std::string(host), port);
}

bool DomainPattern::matches(std::string_view host, std::uint16_t port) const {
  if (port_ && *port_ != port) return false;
  if (kind_ == Kind::Any) return true;
  if (host.ends_with('.')) host.remove_suffix(1);
  if (!is_plain_host(host)) return false;
  if (kind_ == Kind::Exact) return equals_ignoring_case(host, domain_);
  // Strict subdomain: at least one label, then a dot, then exactly the domain.
  if (host.size() < domain_.size() + 2) return false;
  const std::size_t dot = host.size() - domain_.size() - 1;
  return host[dot] == '.' && equals_ignoring_case(host.substr(dot + 1), domain_);
}

std::string DomainPattern::text() const {
  std::string out;
  switch (kind_) {
    case Kind::Exact:
      out = domain_;
      break;
    case Kind::Subdomains:
      out = "*." + domain_;
      break;
    case Kind::Any:
      out = "*";
      break;
  }
  if (port_) out += ":" + std::to_string(*port_);
  return out;
}

}  // namespace pisandbox::policy
