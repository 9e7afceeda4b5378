#include "proxy/protocol/parent_proxy.hpp"

#include <algorithm>
#include <array>

#include "core/ascii.hpp"
#include "proxy/protocol/credential.hpp"
#include "proxy/protocol/destination.hpp"

namespace pisandbox::proxy {
namespace {

using Reason = std::unexpected<std::string>;
using core::is_digit;
using core::is_space;
using core::lowercase;
using core::to_lower;
using core::trim;

int hex_value(char c) {
  c = to_lower(c);
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// RFC 3986 section 2.1.
std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int high = hex_value(text[i + 1]);
    const int low = hex_value(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

bool is_host_name_char(char c) {
  return core::is_label_char(c) || c == '.' || c == '_';
}

// The host of the parent's URL: a name or IPv4 address, or an IPv6 address in brackets.
std::expected<std::string, std::string> parse_parent_host(std::string_view host) {
  if (host.empty()) return Reason("has no host");
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return Reason("has a bad host");
    const std::string inner = lowercase(host.substr(1, host.size() - 2));
    const bool ok = std::ranges::all_of(
        inner, [](char c) { return core::is_hex_digit(c) || c == ':' || c == '.'; });
    if (!ok || inner.find(':') == std::string::npos) return Reason("has a bad host");
    return inner;
  }
  std::string name = lowercase(host);
  if (!std::ranges::all_of(name, is_host_name_char) || name.front() == '.')
    return Reason("has a bad host");
  return name;
}

// Splits `host[:port]` (the host possibly `[v6]`).
std::expected<std::pair<std::string, std::uint16_t>, std::string> parse_host_port(
    std::string_view authority) {
  std::string_view host = authority;
  std::uint16_t port = kDefaultParentPort;
  const std::size_t colon = authority.rfind(':');
  const std::size_t bracket = authority.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    host = authority.substr(0, colon);
    auto parsed = parse_port(authority.substr(colon + 1));
    if (!parsed) return Reason(parsed.error());
    port = *parsed;
  }
  auto name = parse_parent_host(host);
  if (!name) return Reason(name.error());
  return std::pair{std::move(*name), port};
}

// An entry of NO_PROXY that is an address, a range or has a port: it can never match a host
// name the per-command proxy decides.
bool is_address_entry(std::string_view entry) {
  if (entry.find_first_of(":/[]") != std::string_view::npos) return true;
  return std::ranges::all_of(entry, [](char c) { return is_digit(c) || c == '.'; });
}

bool is_separator(char c) {
  return c == ',' || is_space(c);
}

std::optional<std::string> first_value(std::span<const std::string> env,
                                       std::initializer_list<std::string_view> names,
                                       std::string& variable) {
  for (std::string_view name : names) {
    for (const std::string& entry : env) {
      if (entry.size() <= name.size() || !entry.starts_with(name) || entry[name.size()] != '=')
        continue;
      const std::string_view value = std::string_view(entry).substr(name.size() + 1);
      if (trim(value).empty()) break;  // the first entry of a name counts: empty is unset
      variable = std::string(name);
      return std::string(value);
    }
  }
  return std::nullopt;
}

std::optional<ParentSetting> setting(std::span<const std::string> env,
                                     std::initializer_list<std::string_view> names) {
  std::string variable;
  auto value = first_value(env, names, variable);
  if (!value) return std::nullopt;
  return ParentSetting{std::move(variable), parse_parent_proxy_url(*value)};
}

}  // namespace

std::string ParentProxy::display() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string ParentProxy::authorization() const {
  if (!user) return {};
  return "Basic " + base64(*user + ":" + password);
}

std::string ParentProxy::connect_request(std::string_view destination, std::uint16_t to) const {
  const std::string authority = std::string(destination) + ":" + std::to_string(to);
  std::string request = "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n";
  if (user) request += "Proxy-Authorization: " + authorization() + "\r\n";
  return request + "\r\n";
}

std::expected<ParentProxy, std::string> parse_parent_proxy_url(std::string_view url) {
  url = trim(url);
  if (url.empty()) return Reason("is empty");
  if (const std::size_t scheme_end = url.find("://"); scheme_end != std::string_view::npos) {
    const std::string scheme = lowercase(url.substr(0, scheme_end));
    if (scheme != "http")
      return Reason("uses the scheme " + scheme + "; only http:// parent proxies are supported");
    url.remove_prefix(scheme_end + 3);
  }
  const std::string_view authority = url.substr(0, url.find_first_of("/?#"));
  ParentProxy parent;
  std::string_view host_port = authority;
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    const std::string_view userinfo = authority.substr(0, at);
    host_port = authority.substr(at + 1);
    const std::size_t colon = userinfo.find(':');
    auto user = percent_decode(userinfo.substr(0, colon));
    auto password = percent_decode(colon == std::string_view::npos ? std::string_view()
                                                                   : userinfo.substr(colon + 1));
    if (!user || !password) return Reason("has a bad percent-encoding in its user information");
    parent.user = std::move(*user);
    parent.password = std::move(*password);
  }
  auto host = parse_host_port(host_port);
  if (!host) return Reason(host.error());
  parent.host = std::move(host->first);
  parent.port = host->second;
  return parent;
}

NoProxy NoProxy::parse(std::string_view list) {
  NoProxy no_proxy;
  std::size_t i = 0;
  while (i < list.size()) {
    if (is_separator(list[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < list.size() && !is_separator(list[end])) ++end;
    const std::string_view entry = list.substr(i, end - i);
    i = end;
    if (entry == "*") {
      no_proxy.all_ = true;
      continue;
    }
    std::string_view domain = entry;
    if (domain.starts_with("*.")) domain.remove_prefix(2);
    while (domain.starts_with('.')) domain.remove_prefix(1);
    if (domain.ends_with('.')) domain.remove_suffix(1);
    const bool ascii =
        std::ranges::all_of(domain, [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    std::optional<std::string> usable;
    if (!domain.empty() && !is_address_entry(domain)) {
      if (ascii) {
        usable = lowercase(domain);
      } else if (auto normalised = normalise_host(domain)) {
        usable = std::move(*normalised);
      }
    }
    if (usable) {
      no_proxy.domains_.push_back(std::move(*usable));
    } else {
      no_proxy.ignored_.emplace_back(entry);
    }
  }
  return no_proxy;
}

bool NoProxy::matches(std::string_view host) const {
  if (all_) return true;
  return std::ranges::any_of(domains_, [host](const std::string& domain) {
    if (host == domain) return true;
    return host.size() > domain.size() && host.ends_with(domain) &&
           host[host.size() - domain.size() - 1] == '.';
  });
}

const ParentSetting* ParentProxies::route(std::string_view host, ParentUse use) const {
  const std::optional<ParentSetting>& parent = use == ParentUse::Tunnel ? tunnel : plain;
  if (!parent || no_proxy.matches(host)) return nullptr;
  return &*parent;
}

ParentProxies parent_proxies_from_environment(std::span<const std::string> env) {
  ParentProxies parents;
  parents.tunnel = setting(env, {"https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"});
  parents.plain = setting(env, {"http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"});
  if (auto list = first_value(env, {"no_proxy", "NO_PROXY"}, parents.no_proxy_variable))
    parents.no_proxy = NoProxy::parse(*list);
  return parents;
}

}  // namespace pisandbox::proxy
