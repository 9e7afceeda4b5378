// pisandbox::sandbox::linux_ — the records between the supervisor's Unix-socket broker
// (unix_broker.hpp) and its helper inside the sandbox (run_unix_helper()), and the pure reading
// of a socket address.
//
// Each brokered call gets a socketpair of its own (SOCK_SEQPACKET): the supervisor sends a
// HelperRequest over the helper's channel with SCM_RIGHTS descriptors [the call's end of the
// pair, the socket, the caller's working directory], then talks to the helper's thread over
// the pair alone: a HelperReply, and for a Resolve a HelperVerdict and a second HelperReply.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>

namespace pisandbox::sandbox::linux_ {

/// What the helper does with the socket.
enum class HelperOp : std::uint32_t {
  Bind = 1,     ///< bind(socket, address) from the caller's working directory
  Connect = 2,  ///< connect(socket, address) from the caller's working directory
  Resolve = 3,  ///< open the address's path (O_PATH, following symlinks as connect() does),
                ///< reply with what it is, then connect to exactly that inode if told to
};

/// One call for the helper. `address` holds `address_length` bytes (at most
/// sizeof(sockaddr_storage), as the kernel accepts).
struct HelperRequest {
  HelperOp op;
  std::uint32_t address_length;
  unsigned char address[sizeof(sockaddr_storage)];
};

/// The helper's answer: `error` 0 or an errno. For Resolve: `mode`, `device` and `inode` of
/// what the path leads to (when `error` is 0; its O_PATH descriptor comes with the reply),
/// and `path`, the address's path made absolute in the sandbox's view (`path_length` bytes,
/// also when the path does not resolve).
struct HelperReply {
  std::int32_t error;
  std::uint32_t mode;
  std::uint64_t device;
  std::uint64_t inode;
  std::uint32_t path_length;
  char path[4096];
};

/// The supervisor's word on a resolved path: connect (1) or not (0).
struct HelperVerdict {
  std::uint32_t connect;
};

/// What a socket address names (unix(7)).
enum class UnixAddressKind {
  Other,     ///< not AF_UNIX, unnamed (autobind) or malformed: the kernel decides alone
  Abstract,  ///< sun_path[0] == 0: a name in the socket's own network namespace
  Path,      ///< a socket file
};

/// The reading of one address: its kind and, for Path, the path (up to the first NUL within
/// the length, as the kernel reads it).
struct UnixAddress {
  UnixAddressKind kind = UnixAddressKind::Other;
  std::string path;
};

/// Reads the `bytes` a caller passed to bind() or connect() of an AF_UNIX socket (pure).
[[nodiscard]] UnixAddress read_unix_address(std::span<const unsigned char> bytes);

/// Runs the helper in the calling process (pid 1's child, confined like the command but with
/// UnixSockets::Refused and no listener, not dumpable): serves `channel` until it closes, one
/// thread per call, each with a working directory of its own. Never returns.
[[noreturn]] void run_unix_helper(int channel);

}  // namespace pisandbox::sandbox::linux_
