// pisandbox::core — writing a whole buffer to a descriptor.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

namespace pisandbox::core {

/// Writes all of `bytes` to `fd`, retrying on EINTR and, for a non-blocking descriptor,
/// waiting with poll(2) on EAGAIN. Returns false when a write fails (the reader is gone:
/// EPIPE with SIGPIPE ignored or blocked, EBADF, ...); what was written stays written.
inline bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd out{fd, POLLOUT, 0};
      (void)::poll(&out, 1, -1);
      continue;
    }
    return false;
  }
  return true;
}

}  // namespace pisandbox::core
