// libFuzzer target for the bytes a sandboxed command gives bind() and connect() as an AF_UNIX
// address (sandbox/linux/unix_wire.hpp, read_unix_address) and for hostIPC.allowedSockets
// entries (policy/host_sockets.hpp, expand_socket_path).
//
// Properties checked on every input (abort on violation):
//   - a Path is non-empty, holds no NUL, fits sun_path, and is a prefix of the bytes after
//     the family; Abstract only when the first path byte is NUL; lengths outside
//     (sizeof(sa_family_t), sizeof(sockaddr_un)] or another family are Other;
//   - an expansion is either refused or an absolute path.
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "policy/host_sockets.hpp"
#include "sandbox/linux/unix_wire.hpp"

namespace {

using pisandbox::sandbox::linux_::read_unix_address;
using pisandbox::sandbox::linux_::UnixAddressKind;

void check(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto read = read_unix_address({data, size});
  constexpr std::size_t kPath = offsetof(sockaddr_un, sun_path);
  sa_family_t family = 0;
  if (size >= sizeof family) std::memcpy(&family, data, sizeof family);
  const bool in_range = size > kPath && size <= sizeof(sockaddr_un) && family == AF_UNIX;
  if (!in_range) check(read.kind == UnixAddressKind::Other);
  if (read.kind == UnixAddressKind::Abstract) check(in_range && data[kPath] == 0);
  if (read.kind == UnixAddressKind::Path) {
    check(in_range && !read.path.empty() && read.path.size() <= size - kPath);
    check(read.path.find('\0') == std::string::npos);
    check(std::memcmp(read.path.data(), data + kPath, read.path.size()) == 0);
  }
  const std::string entry(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string> env = {"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "EMPTY=", "REL=a/b"};
  if (const auto path = pisandbox::policy::expand_socket_path(entry, env, "/home/u"))
    check(path->starts_with('/'));
  return 0;
}
