#include "proxy/protocol/address.hpp"

#include <arpa/inet.h>

#include <algorithm>

namespace pisandbox::proxy {
namespace {

using V4 = std::array<std::uint8_t, 4>;

struct Range4 {
  V4 network;
  int prefix;
  std::string_view name;
};

// docs/network.md, "Deciding a destination" and compatibility C39, IPv4 (RFC 6890 special-purpose
// registry).
constexpr std::array<Range4, 11> kProhibited4{{
    {{0, 0, 0, 0}, 8, "unspecified"},
    {{10, 0, 0, 0}, 8, "private"},
    {{100, 64, 0, 0}, 10, "carrier-grade NAT"},
    {{127, 0, 0, 0}, 8, "loopback"},
    {{169, 254, 0, 0}, 16, "link-local"},
    {{172, 16, 0, 0}, 12, "private"},
    {{192, 0, 0, 0}, 24, "IETF protocol assignments"},
    {{192, 168, 0, 0}, 16, "private"},
    {{198, 18, 0, 0}, 15, "benchmarking"},
    {{224, 0, 0, 0}, 4, "multicast"},
    {{240, 0, 0, 0}, 4, "reserved"},  // includes the broadcast address 255.255.255.255
}};

bool in_prefix(std::span<const std::uint8_t> address, std::span<const std::uint8_t> network,
               int prefix) {
  for (int bit = 0; bit < prefix; ++bit) {
    const auto byte = static_cast<std::size_t>(bit / 8);
    const int mask = 0x80 >> (bit % 8);
    if ((address[byte] & mask) != (network[byte] & mask)) return false;
  }
  return true;
}

std::optional<std::string> prohibited4(const V4& address) {
  for (const Range4& range : kProhibited4) {
    if (in_prefix(address, range.network, range.prefix)) return std::string(range.name);
  }
  return std::nullopt;
}

V4 v4_at(const std::array<std::uint8_t, 16>& bytes, std::size_t offset) {
  return {bytes[offset], bytes[offset + 1], bytes[offset + 2], bytes[offset + 3]};
}

bool all_zero(std::span<const std::uint8_t> bytes) {
  return std::ranges::all_of(bytes, [](std::uint8_t b) { return b == 0; });
}

bool is_v4_mapped(const std::array<std::uint8_t, 16>& b) {
  return all_zero(std::span(b).first(10)) && b[10] == 0xff && b[11] == 0xff;
}

// ::/96 (RFC 4291 section 2.5.5.1, deprecated) — :: and ::1 are named on their own.
bool is_v4_compatible(const std::array<std::uint8_t, 16>& b) {
  return all_zero(std::span(b).first(12));
}

struct Range6 {
  std::array<std::uint8_t, 16> network;
  int prefix;
  std::string_view name;
};

// docs/network.md, "Deciding a destination" and compatibility C39, IPv6 (RFC 6890 and RFC 4291).
constexpr std::array<Range6, 8> kProhibited6{{
    {{}, 128, "unspecified"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "loopback"},
    {{0xfc}, 7, "private"},
    {{0xfe, 0x80}, 10, "link-local"},
    {{0xfe, 0xc0}, 10, "site-local (deprecated)"},  // RFC 3879
    {{0xff}, 8, "multicast"},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, "local-use NAT64"},          // RFC 8215
    {{0x20, 0x01, 0, 0}, 32, "Teredo (embeds an obscured IPv4)"},  // RFC 4380
}};

std::optional<std::string> embedded(const V4& address, std::string_view form) {
  auto name = prohibited4(address);
  if (!name) return std::nullopt;
  return *name + " (" + std::string(form) + ")";
}

std::optional<std::string> prohibited6(const std::array<std::uint8_t, 16>& b) {
  for (const Range6& range : kProhibited6) {
    if (in_prefix(b, range.network, range.prefix)) return std::string(range.name);
  }
  if (is_v4_mapped(b)) return embedded(v4_at(b, 12), "IPv4-mapped");
  // ::ffff:0:0/96, the IPv4-translated form of RFC 2765 section 2.1.
  if (all_zero(std::span(b).first(8)) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
    return embedded(v4_at(b, 12), "IPv4-translated");
  if (is_v4_compatible(b)) return embedded(v4_at(b, 12), "IPv4-compatible");
  // 64:ff9b::/96, RFC 6052 section 2.1.
  constexpr std::array<std::uint8_t, 16> kNat64{0, 0x64, 0xff, 0x9b};
  if (in_prefix(b, kNat64, 96)) return embedded(v4_at(b, 12), "NAT64");
  // 2002::/16, RFC 3056 section 2: the IPv4 address follows the prefix.
  if (b[0] == 0x20 && b[1] == 0x02) return embedded(v4_at(b, 2), "6to4");
  return std::nullopt;
}

// The IPv4 address an IPv6 address embeds (mapped, compatible, translated, NAT64, 6to4),
// if any: such an address can lead back to one of the host's own IPv4 addresses.
std::optional<V4> as_v4(const IpAddress& address) {
  const auto& b = address.bytes;
  if (address.family == IpAddress::Family::V4) return v4_at(b, 0);
  if (is_v4_mapped(b)) return v4_at(b, 12);
  if (is_v4_compatible(b) && !all_zero(std::span(b).subspan(12, 3))) return v4_at(b, 12);
  if (all_zero(std::span(b).first(8)) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)
    return v4_at(b, 12);
  constexpr std::array<std::uint8_t, 16> kNat64{0, 0x64, 0xff, 0x9b};
  if (in_prefix(b, kNat64, 96)) return v4_at(b, 12);
  if (b[0] == 0x20 && b[1] == 0x02) return v4_at(b, 2);
  return std::nullopt;
}

}  // namespace

IpAddress IpAddress::v4(std::array<std::uint8_t, 4> octets) {
  IpAddress address;
  std::ranges::copy(octets, address.bytes.begin());
  return address;
}

IpAddress IpAddress::v6(std::array<std::uint8_t, 16> octets) {
  return IpAddress{Family::V6, octets};
}

std::optional<IpAddress> IpAddress::parse(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  const std::string copy(text);
  IpAddress address;
  if (::inet_pton(AF_INET, copy.c_str(), address.bytes.data()) == 1) return address;
  address.family = Family::V6;
  if (::inet_pton(AF_INET6, copy.c_str(), address.bytes.data()) == 1) return address;
  return std::nullopt;
}

std::string IpAddress::text() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(family == Family::V4 ? AF_INET : AF_INET6, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

std::optional<std::string> prohibited_range(const IpAddress& address) {
  if (address.family == IpAddress::Family::V4) return prohibited4(v4_at(address.bytes, 0));
  return prohibited6(address.bytes);
}

bool is_interface_address(const IpAddress& address, std::span<const IpAddress> interfaces) {
  const auto v4 = as_v4(address);
  return std::ranges::any_of(interfaces, [&](const IpAddress& own) {
    if (own == address) return true;
    const auto own_v4 = as_v4(own);
    return v4 && own_v4 && *v4 == *own_v4;
  });
}

}  // namespace pisandbox::proxy
