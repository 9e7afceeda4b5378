// pisandbox::proxy — the addresses of the host's own network interfaces, which a sandboxed
// command must not reach through the proxy (docs/network.md, "Deciding a destination";
// compatibility C40).
#pragma once

#include <vector>

#include "core/error.hpp"
#include "proxy/protocol/address.hpp"

namespace pisandbox::proxy {

/// Every IPv4 and IPv6 address configured on an interface of the calling process's network
/// namespace (getifaddrs(3)), loopback included. Errors: `getifaddrs(): <errno>`.
[[nodiscard]] core::Result<std::vector<IpAddress>> host_interface_addresses();

}  // namespace pisandbox::proxy
