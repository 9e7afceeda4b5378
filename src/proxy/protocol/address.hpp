// pisandbox::proxy — which IP addresses a sandboxed command may reach: the public-address
// classifier and the host-interface check (pure).
//
// Source: docs/network.md, "Deciding a destination"; compatibility C38–C39 (the ranges
// pi-sandbox 0.4.0 prohibits) and C40 (the resolved-address guard of sandbox-runtime 0.0.83:
// an allowed name that resolves to a local address is refused). Stricter than the reference:
// the IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms of a prohibited IPv4 address are
// prohibited too, as are the host's own interface addresses.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pisandbox::proxy {

/// One IPv4 or IPv6 address in network byte order.
///   family: V4 uses bytes[0..3] (the rest is zero), V6 all 16 bytes.
struct IpAddress {
  enum class Family { V4, V6 };

  Family family = Family::V4;
  std::array<std::uint8_t, 16> bytes{};

  /// An IPv4 address from its four bytes, e.g. {127, 0, 0, 1}.
  static IpAddress v4(std::array<std::uint8_t, 4> octets);
  /// An IPv6 address from its sixteen bytes.
  static IpAddress v6(std::array<std::uint8_t, 16> octets);

  /// Parses the numeric text of one address as inet_pton(3) does (dotted quad with exactly
  /// four decimal parts, or RFC 4291 text without brackets or zone). nullopt otherwise.
  static std::optional<IpAddress> parse(std::string_view text);

  /// The address as text (inet_ntop(3): `127.0.0.1`, `::ffff:127.0.0.1`).
  [[nodiscard]] std::string text() const;

  friend bool operator==(const IpAddress&, const IpAddress&) = default;
};

/// Why an address is not public: the name of the range that contains it, or nullopt for a
/// public address (docs/network.md, "Deciding a destination"). Names (IPv4 / IPv6):
///   "unspecified"          0.0.0.0/8 ("this network"), ::
///   "loopback"             127.0.0.0/8, ::1
///   "private"              10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7
///   "carrier-grade NAT"    100.64.0.0/10
///   "link-local"           169.254.0.0/16 (cloud metadata 169.254.169.254), fe80::/10
///   "multicast"            224.0.0.0/4, ff00::/8
///   "reserved"             240.0.0.0/4, including broadcast 255.255.255.255
///   "IETF protocol assignments"  192.0.0.0/24
///   "benchmarking"         198.18.0.0/15
/// An IPv6 address that embeds an IPv4 address is judged by the embedded address, and the
/// name says where it was found, e.g. "loopback (IPv4-mapped)":
///   ::ffff:0:0/96 "IPv4-mapped", ::/96 other than :: and ::1 "IPv4-compatible",
///   64:ff9b::/96 "NAT64", 2002::/16 "6to4" (bytes 2-5).
/// Pure; never throws.
[[nodiscard]] std::optional<std::string> prohibited_range(const IpAddress& address);

/// Whether `address` is one of the host's own interface addresses (docs/network.md, "Deciding a
/// destination", compatibility C40), comparing IPv4-mapped and IPv4-compatible IPv6 forms by their
/// IPv4 address.
///   interfaces: the host's addresses (collected by proxy::host_interface_addresses()).
[[nodiscard]] bool is_interface_address(const IpAddress& address,
                                        std::span<const IpAddress> interfaces);

}  // namespace pisandbox::proxy
