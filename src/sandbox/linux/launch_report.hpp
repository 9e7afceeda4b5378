// pisandbox::sandbox::linux_ — what the supervisor learns from the sandbox's pid 1 over the
// launch socket (launch_spec.hpp, LaunchMessage): its records read into one LaunchReport.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/unique_fd.hpp"
#include "sandbox/command.hpp"
#include "sandbox/linux/placeholders.hpp"
#include "sandbox/linux/unix_broker.hpp"

namespace pisandbox::sandbox::linux_ {

/// What the supervisor learns from pid 1 over the launch socket.
struct LaunchReport {
  std::string error;
  std::optional<std::variant<Exited, Signaled>> result;
  std::vector<Placeholder> placeholders;
  std::optional<ProxyListeners> listeners;  ///< received, not yet handed to the proxy
  core::UniqueFd terminal;                  ///< the private pty's master, not yet relayed
  std::vector<std::string> notices;         ///< the lines of pid 1's last guard sweep
  bool swept = false;                       ///< pid 1 ran the guard's last sweep
  bool tmpfs_full = false;                  ///< the tmpfs budget was full at the end
  std::optional<UnixBrokerChannels> unix;   ///< received, not yet handed to the broker
};

/// Reads every record pending on the launch socket `fd` into `report` (without blocking);
/// returns false at the end of the stream. Malformed records are dropped, their descriptors
/// closed.
bool read_records(int fd, LaunchReport& report);

}  // namespace pisandbox::sandbox::linux_
