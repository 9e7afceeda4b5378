// Where an allowed host socket is connected (session/host_socket_setup.hpp): a gpg-agent socket,
// named `S.gpg-agent` or the session's agent under another name, goes to the extra socket beside
// it (docs/security.md, "Signed commits"); any other socket to itself. Real Unix sockets in a
// scratch directory.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "approval/clock.hpp"
#include "approval_fixtures.hpp"
#include "session/host_socket_setup.hpp"

namespace pisandbox::session {
namespace {

namespace fs = std::filesystem;

/// A Unix socket bound at `path` (the file stays after the descriptor is closed).
void make_socket(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.string().size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, path.c_str());
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0)
      << path << ": " << std::strerror(errno);
  ::close(fd);
}

class HostSocketRouting : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/pi-sandbox-host-sockets-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// HostSockets allowing each of `paths` (as written) and writing nothing.
  std::unique_ptr<HostSockets> sockets(const std::vector<fs::path>& paths) {
    std::vector<policy::AllowedSocket> allowed;
    for (const fs::path& path : paths) allowed.push_back({path.string(), path.string()});
    return std::make_unique<HostSockets>(
        std::move(allowed), std::vector<policy::WritableArea>{}, broker_, nullptr, NetworkCommand{},
        HostSocketAsking::Allowed, [this](const std::string& line) { lines_.push_back(line); },
        nullptr);
  }

  fs::path dir_;
  std::vector<std::string> lines_;
  approval::SteadyClock clock_;
  approval::testing::MemoryAudit audit_;
  approval::Broker broker_{approval::BrokerOptions{}, clock_, audit_, nullptr, nullptr};
};

TEST_F(HostSocketRouting, TheSessionsAgentUnderAnotherNameGoesToTheExtraSocketBesideIt) {
  const fs::path agent = dir_ / "forwarded-agent";
  make_socket(agent);
  make_socket(dir_ / "S.gpg-agent.extra");
  auto plain = sockets({agent});
  EXPECT_EQ(plain->decide({agent.string()}).connect_to, "");
  auto session = sockets({agent});
  session->add_gpg_agent(agent.string());
  const sandbox::HostSocketAnswer answer = session->decide({agent.string()});
  EXPECT_TRUE(answer.allow) << answer.reason;
  EXPECT_EQ(answer.connect_to, (dir_ / "S.gpg-agent.extra").string());
  EXPECT_TRUE(lines_.empty());
}

TEST_F(HostSocketRouting, EveryAllowedStandardAgentSocketGoesToItsExtraSocket) {
  fs::create_directories(dir_ / "release");
  const fs::path agent = dir_ / "release" / "S.gpg-agent";
  make_socket(agent);
  make_socket(dir_ / "release" / "S.gpg-agent.extra");
  const sandbox::HostSocketAnswer answer = sockets({agent})->decide({agent.string()});
  EXPECT_TRUE(answer.allow) << answer.reason;
  EXPECT_EQ(answer.connect_to, (dir_ / "release" / "S.gpg-agent.extra").string());
}

TEST_F(HostSocketRouting, AnAgentWithoutItsExtraSocketIsRefused) {
  const fs::path agent = dir_ / "S.gpg-agent";
  make_socket(agent);
  const sandbox::HostSocketAnswer answer = sockets({agent})->decide({agent.string()});
  const std::string reason = "the agent has no restricted socket " +
                             (dir_ / "S.gpg-agent.extra").string() +
                             " (gpg-agent --extra-socket); its full socket would let the command "
                             "export the secret keys";
  EXPECT_FALSE(answer.allow);
  EXPECT_EQ(answer.reason, reason);
  EXPECT_EQ(lines_,
            (std::vector<std::string>{"host socket refused: " + agent.string() + ": " + reason}));
}

TEST_F(HostSocketRouting, AnyOtherAllowedSocketIsConnectedItself) {
  const fs::path socket = dir_ / "S.gpg-agent.ssh";
  make_socket(socket);
  make_socket(dir_ / "S.gpg-agent.extra");
  const sandbox::HostSocketAnswer answer = sockets({socket})->decide({socket.string()});
  EXPECT_TRUE(answer.allow) << answer.reason;
  EXPECT_EQ(answer.connect_to, "");
}

TEST_F(HostSocketRouting, WhereTheHomeIsTheWorkspaceOnlyItsWritableEntriesAllowNothing) {
  // The areas of a workspace that is the home (session::writable_areas()): the home bound
  // read-only over the workspace's bind, its ordinary entries read-write again.
  const fs::path home = dir_ / "home";
  fs::create_directories(home / ".ssh");
  fs::create_directories(home / "src");
  const fs::path agent = home / ".ssh" / "agent.sock", top = home / "top.sock",
                 own = home / "src" / "dev.sock";
  for (const fs::path& path : {agent, top, own}) make_socket(path);
  const std::vector<policy::WritableArea> areas = {
      {home, true}, {home, false}, {home / "src", true}};
  std::vector<policy::AllowedSocket> allowed;
  for (const fs::path& path : {agent, top, own}) allowed.push_back({path.string(), path.string()});
  const HostSockets sockets(std::move(allowed), areas, broker_, nullptr, NetworkCommand{},
                            HostSocketAsking::Allowed, nullptr, nullptr);
  EXPECT_TRUE(sockets.allows(agent));
  EXPECT_TRUE(sockets.allows(top));
  EXPECT_FALSE(sockets.allows(own));  // the command can put another socket at that name
  EXPECT_TRUE(sockets.writable_by_command(own));
  EXPECT_FALSE(sockets.writable_by_command(agent));
  EXPECT_FALSE(sockets.allows(home / ".ssh" / "other.sock"));  // not listed
}

}  // namespace
}  // namespace pisandbox::session
