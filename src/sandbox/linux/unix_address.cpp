// The reading of a socket address as the kernel reads it (unix(7); net/unix/af_unix.c,
// unix_validate_addr() and unix_mkname_bsd()). Pure: fuzzed by tests/fuzz/unix_address_fuzz.cpp.
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "sandbox/linux/unix_wire.hpp"

namespace pisandbox::sandbox::linux_ {

UnixAddress read_unix_address(std::span<const unsigned char> bytes) {
  constexpr std::size_t kPath = offsetof(sockaddr_un, sun_path);
  if (bytes.size() <= kPath || bytes.size() > sizeof(sockaddr_un)) return {};
  sa_family_t family;
  std::memcpy(&family, bytes.data(), sizeof family);
  if (family != AF_UNIX) return {};
  const auto path = bytes.subspan(kPath);
  if (path[0] == 0) return {UnixAddressKind::Abstract, {}};
  const auto end = std::ranges::find(path, 0);
  return {UnixAddressKind::Path, std::string(path.begin(), end)};
}

}  // namespace pisandbox::sandbox::linux_
