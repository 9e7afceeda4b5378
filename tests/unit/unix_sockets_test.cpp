#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "config/config.hpp"
#include "policy/host_sockets.hpp"
#include "sandbox/linux/unix_wire.hpp"

namespace pisandbox {
namespace {

using sandbox::linux_::read_unix_address;
using sandbox::linux_::UnixAddressKind;

/// The bytes of a sockaddr_un with `path` (which may hold NULs) and `length` bytes in all.
std::vector<unsigned char> address(std::string_view path, std::size_t length) {
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path, path.data(), std::min(path.size(), sizeof un.sun_path));
  const auto* bytes = reinterpret_cast<const unsigned char*>(&un);
  return {bytes, bytes + length};
}

constexpr std::size_t kPath = offsetof(sockaddr_un, sun_path);

TEST(UnixAddress, APathEndsAtTheFirstNulOrAtTheLength) {
  auto read = read_unix_address(address("/tmp/s.sock", kPath + 12));
  EXPECT_EQ(read.kind, UnixAddressKind::Path);
  EXPECT_EQ(read.path, "/tmp/s.sock");
  read = read_unix_address(address("/tmp/s.sockXYZ", kPath + 11));  // no NUL: cut at length
  EXPECT_EQ(read.path, "/tmp/s.sock");
  read = read_unix_address(address(std::string_view("rel\0/host", 9), kPath + 9));
  EXPECT_EQ(read.kind, UnixAddressKind::Path);
  EXPECT_EQ(read.path, "rel");
}

TEST(UnixAddress, AbstractUnnamedForeignAndOversizedAddressesAreNotPaths) {
  EXPECT_EQ(read_unix_address(address(std::string_view("\0name", 5), kPath + 5)).kind,
            UnixAddressKind::Abstract);
  EXPECT_EQ(read_unix_address(address("", kPath)).kind, UnixAddressKind::Other);
  auto foreign = address("/tmp/s", kPath + 7);
  const sa_family_t inet = AF_INET;
  std::memcpy(foreign.data(), &inet, sizeof inet);
  EXPECT_EQ(read_unix_address(foreign).kind, UnixAddressKind::Other);
  std::vector<unsigned char> oversized(sizeof(sockaddr_un) + 1, 'a');
  std::memcpy(oversized.data(), &address("", kPath)[0], kPath);
  EXPECT_EQ(read_unix_address(oversized).kind, UnixAddressKind::Other);
  EXPECT_EQ(read_unix_address({}).kind, UnixAddressKind::Other);
}

TEST(AllowedSockets, VariablesAndTheHomeAreExpanded) {
  const std::vector<std::string> env = {"SSH_AUTH_SOCK=/tmp/ssh-X/agent.1",
                                        "XDG_RUNTIME_DIR=/run/user/1000", "EMPTY="};
  EXPECT_EQ(policy::expand_socket_path("$SSH_AUTH_SOCK", env, "/home/u"), "/tmp/ssh-X/agent.1");
  EXPECT_EQ(policy::expand_socket_path("${XDG_RUNTIME_DIR}/gnupg/S.gpg-agent", env, "/home/u"),
            "/run/user/1000/gnupg/S.gpg-agent");
  EXPECT_EQ(policy::expand_socket_path("~/.docker/run/docker.sock", env, "/home/u"),
            "/home/u/.docker/run/docker.sock");
  EXPECT_EQ(policy::expand_socket_path("/run/docker.sock", env, "/home/u"), "/run/docker.sock");
}

TEST(AllowedSockets, UnsetEmptyOrRelativeExpansionsAllowNothing) {
  const std::vector<std::string> env = {"EMPTY=", "REL=relative/sock", "SSH_AUTH_SOCKX=/x"};
  EXPECT_EQ(policy::expand_socket_path("$SSH_AUTH_SOCK", env, "/home/u"), std::nullopt);
  EXPECT_EQ(policy::expand_socket_path("$EMPTY/s", env, "/home/u"), std::nullopt);
  EXPECT_EQ(policy::expand_socket_path("$REL", env, "/home/u"), std::nullopt);
  EXPECT_EQ(policy::expand_socket_path("${REL", env, "/home/u"), std::nullopt);
  EXPECT_EQ(policy::expand_socket_path("$1abc", env, "/home/u"), std::nullopt);
  EXPECT_EQ(policy::expand_socket_path("~/s", env, ""), std::nullopt);
  const auto all = policy::allowed_sockets({"$SSH_AUTH_SOCK", "/run/a.sock"}, env, "/home/u");
  EXPECT_EQ(all, (std::vector<policy::AllowedSocket>{{"$SSH_AUTH_SOCK", std::nullopt},
                                                     {"/run/a.sock", "/run/a.sock"}}));
}

TEST(AllowedSocketsConfig, EntriesAreTrimmedDeduplicatedAndShownByToJson) {
  auto config = config::parse(
      R"({"hostIPC": {"allowedSockets": [" $SSH_AUTH_SOCK ", "~/s.sock", "/run/a.sock",
      "$SSH_AUTH_SOCK"]}})");
  ASSERT_TRUE(config) << config.error().describe("c.json");
  EXPECT_EQ(config->host_ipc.allowed_sockets,
            (std::vector<std::string>{"$SSH_AUTH_SOCK", "~/s.sock", "/run/a.sock"}));
  auto again = config::parse(config::to_json(*config));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->host_ipc.allowed_sockets, config->host_ipc.allowed_sockets);
}

TEST(AllowedSocketsConfig, WrongShapesAreRefusedWithTheirMessage) {
  auto shape = config::parse(R"({"hostIPC": {"allowedSockets": "/run/a.sock"}})");
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error().describe("c.json"),
            "invalid pi-sandbox configuration: hostIPC.allowedSockets must be an array of "
            "non-empty strings");
  auto blank = config::parse(R"({"hostIPC": {"allowedSockets": ["/a", " "]}})");
  ASSERT_FALSE(blank);
  EXPECT_EQ(blank.error().describe("c.json"),
            "invalid pi-sandbox configuration: hostIPC.allowedSockets must be an array of "
            "non-empty strings");
  auto relative = config::parse(R"({"hostIPC": {"allowedSockets": ["/a", "run/b.sock"]}})");
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().describe("c.json"),
            "invalid pi-sandbox configuration: hostIPC.allowedSockets[1] must be an absolute "
            "path, ~/..., or start with $VARIABLE: run/b.sock");
}

}  // namespace
}  // namespace pisandbox
