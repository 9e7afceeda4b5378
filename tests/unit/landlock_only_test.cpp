// The weaker sandbox's plans (docs/security.md, "Where namespaces cannot be made"), compared
// whole: the Landlock rules around the hidden paths and the seccomp rows for the host's network.
#include "sandbox/linux/landlock_only.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>

namespace pisandbox::sandbox::linux_ {
namespace {

using Access = LandlockAccess;

/// A host of a few directories; anything else lists as empty.
std::vector<std::string> fake_list(const std::filesystem::path& dir) {
  static const std::map<std::string, std::vector<std::string>> tree = {
      {"/", {"usr", "home", "tmp", "dev", "etc", "run", "var"}},
      {"/home", {"u", "other"}},
      {"/home/u", {"ws", ".ssh", ".cargo", ".gitconfig"}},
      {"/home/u/.cargo", {"bin", "credentials.toml"}},
      {"/dev", {"null", "shm", "pts"}},
      {"/run", {"user", "lock"}},
      {"/var", {"tmp", "lib"}}};
  const auto it = tree.find(dir.string());
  return it == tree.end() ? std::vector<std::string>{} : it->second;
}

policy::SandboxPolicy home_policy() {
  policy::SandboxPolicy policy;
  policy.workspace = "/home/u/ws";
  policy.home = "/home/u";
  policy.hide_home = true;
  policy.writable = {policy::Exposure("/home/u/ws", "workspace", policy::Access::ReadWrite)};
  policy.home_read_allowed = {policy::Exposure("/home/u/.gitconfig"),
                              policy::Exposure("/home/u/.cargo")};
  policy.concealed = {"/home/u/.cargo/credentials.toml"};
  return policy;
}

TEST(LandlockOnlyPlan, ReadsEverywhereButTheHiddenPathsAndWritesOnlyToTheWritableRoots) {
  const std::uint16_t ports[] = {40001, 40002};
  const LandlockPlan plan = plan_landlock_only(
      home_policy(), {"/tmp/pi-sandbox.X/tmp", "/tmp/pi-sandbox.X/home"}, ports, fake_list);
  const std::vector<LandlockRule> expected = {{"/dev/null", Access::ReadExecute},
                                              {"/dev/pts", Access::ReadExecute},
                                              {"/etc", Access::ReadExecute},
                                              {"/home/other", Access::ReadExecute},
                                              {"/run/lock", Access::ReadExecute},
                                              {"/usr", Access::ReadExecute},
                                              {"/var/lib", Access::ReadExecute},
                                              {"/home/u/.gitconfig", Access::ReadExecute},
                                              {"/home/u/.cargo/bin", Access::ReadExecute},
                                              {"/home/u/ws", Access::ReadWrite},
                                              {"/tmp/pi-sandbox.X/tmp", Access::ReadWrite},
                                              {"/tmp/pi-sandbox.X/home", Access::ReadWrite},
                                              {"/dev/null", Access::ReadWrite},
                                              {"/dev/zero", Access::ReadWrite},
                                              {"/dev/full", Access::ReadWrite},
                                              {"/dev/random", Access::ReadWrite},
                                              {"/dev/urandom", Access::ReadWrite},
                                              {"/dev/tty", Access::ReadWrite},
                                              {"/dev/ptmx", Access::ReadWrite},
                                              {"/dev/pts", Access::ReadWrite}};
  EXPECT_EQ(plan.rules, expected);
  EXPECT_TRUE(plan.restrict_tcp_connect);
  EXPECT_EQ(plan.connect_ports, (std::vector<std::uint16_t>{40001, 40002}));
  EXPECT_TRUE(plan.grant_stdio_terminals);
}

TEST(LandlockOnlyPlan, NoRuleCoversAHiddenPath) {
  const std::uint16_t ports[] = {1};
  const LandlockPlan plan = plan_landlock_only(home_policy(), {"/tmp/p", ""}, ports, fake_list);
  for (const char* hidden : {"/home/u/.ssh/id_rsa", "/home/u/.cargo/credentials.toml", "/tmp/x",
                             "/var/tmp/x", "/dev/shm/x", "/run/user/0/x"})
    for (const auto& rule : plan.rules)
      EXPECT_FALSE(policy::is_within(hidden, rule.path)) << hidden << " under " << rule.path;
}

TEST(LandlockOnlyPlan, WithoutAHiddenHomeItIsReadable) {
  policy::SandboxPolicy policy = home_policy();
  policy.hide_home = false;
  EXPECT_EQ(landlock_only_hidden(policy),
            (std::vector<std::filesystem::path>{"/tmp", "/var/tmp", "/dev/shm", "/run/user"}));
}

TEST(LandlockOnlySeccomp, AddsTheHostNetworkRowsToTheBrokeredTable) {
  const std::vector<SeccompRule> rules = landlock_only_seccomp_rules();
  const std::vector<SeccompRule>& brokered = seccomp_rules(UnixSockets::Brokered);
  ASSERT_GT(rules.size(), brokered.size());
  EXPECT_TRUE(std::equal(brokered.begin(), brokered.end(), rules.begin()));
  std::vector<std::string> added;
  for (auto it = rules.begin() + static_cast<long>(brokered.size()); it != rules.end(); ++it) {
    std::string row = it->syscall;
    for (const auto& c : it->conditions)
      row += " " + std::to_string(c.index) + ":" + std::to_string(c.value);
    added.push_back(row);
    EXPECT_EQ(it->error, EPERM);
    EXPECT_EQ(it->action, SeccompAction::Errno);
  }
  const std::vector<std::string> expected = {
      "socket 0:2 1:2", "socket 0:2 1:3",     "socket 0:10 1:2",     "socket 0:10 1:3",
      "socket 0:17",    "sendto 3:536870912", "sendmsg 2:536870912", "sendmmsg 3:536870912"};
  EXPECT_EQ(added, expected);
  EXPECT_TRUE(compile_seccomp(rules).has_value());
}

TEST(LandlockOnlySeccomp, PiSandboxsOwnProcessesAreRefusedAsTargets) {
  const auto rows = own_process_rows({100, 101, 99}, 6);
  std::vector<std::string> shown;
  for (const auto& row : rows) {
    std::string text = row.syscall;
    for (const auto& c : row.conditions) text += " " + std::to_string(c.value);
    shown.push_back(text);
  }
  const std::vector<std::string> expected = {"kill 100",
                                             "kill 101",
                                             "kill 4294967197",
                                             "kill 0",
                                             "kill 4294967295",
                                             "rt_sigqueueinfo 100",
                                             "rt_sigqueueinfo 101",
                                             "rt_sigqueueinfo 4294967197",
                                             "rt_sigqueueinfo 0",
                                             "rt_sigqueueinfo 4294967295",
                                             "tgkill 100",
                                             "tgkill 101",
                                             "rt_tgsigqueueinfo 100",
                                             "rt_tgsigqueueinfo 101",
                                             "tkill",
                                             "pidfd_open 100",
                                             "pidfd_open 101"};
  EXPECT_EQ(shown, expected);
  // Below ABI 6 Landlock does not scope signals: no pidfd may be signalled either.
  const auto older = own_process_rows({100, 101, 99}, 5);
  ASSERT_EQ(older.size(), rows.size() + 1);
  EXPECT_EQ(older.back().syscall, "pidfd_send_signal");
  EXPECT_TRUE(older.back().conditions.empty());
  std::vector<SeccompRule> all = landlock_only_seccomp_rules();
  all.insert(all.end(), older.begin(), older.end());
  EXPECT_TRUE(compile_seccomp(all).has_value());
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
