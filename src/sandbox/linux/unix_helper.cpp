// The Unix-socket broker's helper inside the sandbox (unix_wire.hpp). It makes the bind() and
// connect() calls the supervisor takes over from the command, from inside the sandbox: the
// same mount namespace, root, network namespace, Landlock domain and (no) capabilities as the
// command, so a call means what it would have meant there. It is not dumpable, so the command
// can neither ptrace it nor read or write its memory.
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "core/scm_rights.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/linux/unix_wire.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

using core::UniqueFd;

void send_reply(int fd, const HelperReply& reply, int attached = -1) {
  const std::size_t size = offsetof(HelperReply, path) + reply.path_length;
  (void)core::send_with_rights(
      fd, &reply, size,
      attached >= 0 ? std::span<const int>(&attached, 1) : std::span<const int>());
}

HelperReply error_reply(int error) {
  HelperReply reply{};
  reply.error = error;
  return reply;
}

/// `path` made absolute from the working directory (the sandbox's view of it).
std::string absolute(const std::string& path) {
  if (path.starts_with('/')) return path;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return {};
  return std::string(cwd) + (std::strcmp(cwd, "/") == 0 ? "" : "/") + path;
}

/// Resolve: what the path leads to, then, if the supervisor says so, connect() to exactly
/// that inode through /proc/self/fd (the sandbox's own procfs), never to the path again.
void resolve_and_connect(int reply_fd, int sock, const std::string& path) {
  HelperReply reply{};
  const std::string full = absolute(path);
  reply.path_length = static_cast<std::uint32_t>(std::min(full.size(), sizeof reply.path));
  std::memcpy(reply.path, full.data(), reply.path_length);
  UniqueFd target(::open(path.c_str(), O_PATH | O_CLOEXEC));
  struct stat st {};
  if (!target || ::fstat(target.get(), &st) != 0) {
    reply.error = errno;
    send_reply(reply_fd, reply);
    return;
  }
  reply.mode = st.st_mode;
  reply.device = st.st_dev;
  reply.inode = st.st_ino;
  send_reply(reply_fd, reply, target.get());
  HelperVerdict verdict{};
  if (::recv(reply_fd, &verdict, sizeof verdict, 0) != sizeof verdict || verdict.connect != 1)
    return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string link = "/proc/self/fd/" + std::to_string(target.get());
  std::memcpy(address.sun_path, link.c_str(), link.size() + 1);
  const int rc = ::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof address);
  send_reply(reply_fd, error_reply(rc == 0 ? 0 : errno));
}

void serve_call(HelperRequest request, std::vector<UniqueFd> fds) {
  const int reply_fd = fds[0].get(), sock = fds[1].get();
  // A working directory of this thread's own: other calls run from other directories.
  if (::unshare(CLONE_FS) != 0 || (fds.size() > 2 && ::fchdir(fds[2].get()) != 0)) {
    send_reply(reply_fd, error_reply(errno));
    return;
  }
  const auto* address = reinterpret_cast<const sockaddr*>(request.address);
  const socklen_t length = request.address_length;
  if (request.op == HelperOp::Resolve) {
    const UnixAddress read = read_unix_address({request.address, request.address_length});
    if (read.kind != UnixAddressKind::Path) {
      send_reply(reply_fd, error_reply(EINVAL));
      return;
    }
    resolve_and_connect(reply_fd, sock, read.path);
    return;
  }
  const int rc = request.op == HelperOp::Bind ? ::bind(sock, address, length)
                                              : ::connect(sock, address, length);
  send_reply(reply_fd, error_reply(rc == 0 ? 0 : errno));
}

}  // namespace

[[noreturn]] void run_unix_helper(int channel) {
  for (;;) {
    HelperRequest request{};
    iovec data{&request, sizeof request};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 3)];
    msghdr message{};
    message.msg_iov = &data;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(channel, &message, MSG_CMSG_CLOEXEC);
    if (n == 0 || (n < 0 && errno != EINTR)) ::_exit(0);
    if (n < 0) continue;
    std::vector<UniqueFd> fds = core::received_rights(message);
    if (static_cast<std::size_t>(n) != sizeof request || fds.size() < 2 ||
        request.address_length > sizeof request.address)
      continue;  // not the supervisor's: the descriptors close here
    try {
      std::thread(serve_call, request, std::move(fds)).detach();
    } catch (const std::system_error&) {
      // No thread (the process limit): the call's end of the pair closes, which the
      // supervisor reads as a failed call.
    }
  }
}

}  // namespace pisandbox::sandbox::linux_
