// pisandbox::core — writing a whole buffer to a descriptor, reading the head of a file.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>

#include "core/unique_fd.hpp"

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

/// At most the first `limit` bytes of the regular file `path` (symlinks followed); empty when
/// it cannot be opened or is not a regular file. Opened without blocking and checked on the
/// open descriptor: a path a command can name (a git include, a signing key) may be a FIFO,
/// whose open would wait for a writer. Read in chunks of 16 KiB: most such files are small,
/// and `limit` bytes zeroed up front cost a page fault per 4 KiB on every command.
inline std::string read_regular_head(const char* path, std::size_t limit) {
  const UniqueFd fd(::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  std::string text;
  char chunk[16384];
  while (text.size() < limit) {
    const ssize_t n = ::read(fd.get(), chunk, std::min(sizeof chunk, limit - text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace pisandbox::core
