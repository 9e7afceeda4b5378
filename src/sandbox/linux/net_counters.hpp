// pisandbox::sandbox::linux_ — the kernel's network counters of a sandbox's network namespace:
// did the command try to reach the network without the proxy? (docs/network.md, "Clients that
// ignore the proxy")
//
// Nothing but the proxy's listeners and the command's own loopback services is reachable in the
// sandbox's network namespace, so a client that ignores HTTP_PROXY meets one of two kernel
// events, both counted per namespace (include/uapi/linux/snmp.h; read from
// /proc/<pid>/net/snmp and /proc/<pid>/net/snmp6):
//   - no route to a non-loopback address: `Ip: OutNoRoutes` (IPv4) and `Ip6OutNoRoutes`
//     (IPv6), counted by connect() and sendmsg() when they fail with ENETUNREACH: a
//     connection attempted, which the hint after the command is for;
//   - a datagram to a loopback port nobody listens on: `Udp: NoPorts`, `Udp6NoPorts`: a name
//     lookup through a local stub resolver (systemd-resolved's 127.0.0.53), or through the
//     host's name servers, which pid 1 makes local addresses of the loopback: a lookup, no
//     connection, so no hint.
// A command that only uses the proxy produces neither: its connections go to 127.0.0.1:3128 or
// :1080, which listen.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

/// The counters above, summed over IPv4 and IPv6.
///   no_route: packets (or connects) refused for having no route (OutNoRoutes).
///   no_port:  datagrams that reached a loopback port nobody listens on (NoPorts).
struct DirectAttempts {
  std::uint64_t no_route = 0;
  std::uint64_t no_port = 0;
  [[nodiscard]] bool any() const { return no_route != 0 || no_port != 0; }
  friend bool operator==(const DirectAttempts&, const DirectAttempts&) = default;
};

/// One counter of /proc/net/snmp's format: pairs of lines `<group>: <names...>` and
/// `<group>: <values...>` (e.g. group `Ip`, field `OutNoRoutes`). nullopt when the group or
/// field is missing or the value is not a decimal number.
[[nodiscard]] std::optional<std::uint64_t> snmp_counter(std::string_view text,
                                                        std::string_view group,
                                                        std::string_view field);

/// One counter of /proc/net/snmp6's format: lines `<name> <value>` (e.g. `Ip6OutNoRoutes`).
[[nodiscard]] std::optional<std::uint64_t> snmp6_counter(std::string_view text,
                                                         std::string_view name);

/// DirectAttempts from the texts of snmp and snmp6 (a missing counter counts 0: a kernel
/// without IPv6 has no snmp6).
[[nodiscard]] DirectAttempts direct_attempts(std::string_view snmp, std::string_view snmp6);

/// The counter files of one network namespace, opened while a process is in it: the files keep
/// the namespace's counters readable after the process has exited (the open file holds a
/// reference to the namespace), so the supervisor reads them once the sandbox is gone.
class NetCounters {
 public:
  NetCounters() = default;
  /// Opens /proc/<pid>/net/snmp and /proc/<pid>/net/snmp6 of `pid` (read-only); a file that
  /// cannot be opened is left out (read() then counts what remains).
  static NetCounters open(pid_t pid);
  /// The counters now; nullopt when snmp was not opened or cannot be read.
  [[nodiscard]] std::optional<DirectAttempts> read() const;

 private:
  core::UniqueFd snmp_;
  core::UniqueFd snmp6_;
};

}  // namespace pisandbox::sandbox::linux_
