// pisandbox::policy — which host Unix sockets a sandboxed command may connect to without
// asking (`hostIPC.allowedSockets`; docs/host-ipc.md, "Host sockets"). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// `entry` of hostIPC.allowedSockets with `~/` replaced by `home` and each `$NAME` or `${NAME}`
/// (NAME: a letter or `_`, then letters, digits and `_`) by its value in `env` (`NAME=value`
/// strings, the caller's environment). nullopt when a variable is unset or empty, or when the
/// result is not an absolute path: such an entry allows nothing.
[[nodiscard]] std::optional<std::string> expand_socket_path(std::string_view entry,
                                                            const std::vector<std::string>& env,
                                                            std::string_view home);

/// One allowedSockets entry as it applies to a command: as written, and expanded (nullopt:
/// it allows nothing, see expand_socket_path()).
struct AllowedSocket {
  std::string entry;
  std::optional<std::string> path;

  friend bool operator==(const AllowedSocket&, const AllowedSocket&) = default;
};

/// Every entry of `entries` expanded for a command of the caller with `env` and `home`.
[[nodiscard]] std::vector<AllowedSocket> allowed_sockets(const std::vector<std::string>& entries,
                                                         const std::vector<std::string>& env,
                                                         std::string_view home);

}  // namespace pisandbox::policy
