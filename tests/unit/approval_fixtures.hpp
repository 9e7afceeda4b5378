// Requests shared by the approval unit tests.
#pragma once

#include <string>

#include "approval/boundary_request.hpp"

namespace pisandbox::approval::testing {

/// A network `connect` request as the proxy will ask it (compatibility C36).
inline BoundaryRequest network_request(std::string destination = "example.com:443") {
  BoundaryRequest r;
  r.id = "sandbox-runtime-network-1";
  r.source = "sandbox-runtime";
  r.surface = Surface::Network;
  r.operation = "connect";
  r.cwd = "/home/u/ws";
  r.command = "curl https://example.com";
  r.destination = std::move(destination);
  return r;
}

}  // namespace pisandbox::approval::testing
