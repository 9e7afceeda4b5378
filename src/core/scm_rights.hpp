// pisandbox::core — descriptors passed over a Unix socket as SCM_RIGHTS (unix(7)): the launch
// socket between pid 1 and the supervisor, and the Unix-socket broker's helper channel.
#pragma once

#include <sys/socket.h>

#include <cstring>
#include <span>
#include <vector>

#include "core/unique_fd.hpp"

namespace pisandbox::core {

/// The most descriptors one message carries here.
inline constexpr std::size_t kMaxRights = 8;

/// Sends `size` bytes at `data` as one message on `socket` with `fds` (at most kMaxRights) as
/// SCM_RIGHTS, MSG_NOSIGNAL. Returns what sendmsg(2) returns: the bytes sent, or -1 and errno
/// (EINVAL for more than kMaxRights descriptors).
inline ssize_t send_with_rights(int socket, const void* data, std::size_t size,
                                std::span<const int> fds) {
  if (fds.size() > kMaxRights) {
    errno = EINVAL;
    return -1;
  }
  iovec vector{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxRights)] = {};
  msghdr message{};
  message.msg_iov = &vector;
  message.msg_iovlen = 1;
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  return ::sendmsg(socket, &message, MSG_NOSIGNAL);
}

/// The SCM_RIGHTS descriptors of a message recvmsg(2) filled in, in order, now owned.
inline std::vector<UniqueFd> received_rights(msghdr& message) {
  std::vector<UniqueFd> fds;
  for (cmsghdr* h = CMSG_FIRSTHDR(&message); h != nullptr; h = CMSG_NXTHDR(&message, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
      fds.emplace_back(fd);
    }
  }
  return fds;
}

}  // namespace pisandbox::core
