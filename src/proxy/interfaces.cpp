#include "proxy/interfaces.hpp"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

namespace pisandbox::proxy {

core::Result<std::vector<IpAddress>> host_interface_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return core::fail_errno("getifaddrs()");
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owned(list, &::freeifaddrs);
  std::vector<IpAddress> addresses;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    if (entry->ifa_addr->sa_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(entry->ifa_addr);
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(&in->sin_addr);
      addresses.push_back(IpAddress::v4({bytes[0], bytes[1], bytes[2], bytes[3]}));
      // The subnet's broadcast address reaches this host too.
      if ((entry->ifa_flags & IFF_BROADCAST) != 0 && entry->ifa_broadaddr != nullptr &&
          entry->ifa_broadaddr->sa_family == AF_INET) {
        const auto* bcast = reinterpret_cast<const sockaddr_in*>(entry->ifa_broadaddr);
        const auto* b = reinterpret_cast<const std::uint8_t*>(&bcast->sin_addr);
        addresses.push_back(IpAddress::v4({b[0], b[1], b[2], b[3]}));
      }
    } else if (entry->ifa_addr->sa_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr);
      std::array<std::uint8_t, 16> bytes{};
      std::copy_n(reinterpret_cast<const std::uint8_t*>(&in6->sin6_addr), 16, bytes.begin());
      addresses.push_back(IpAddress::v6(bytes));
    }
  }
  return addresses;
}

}  // namespace pisandbox::proxy
