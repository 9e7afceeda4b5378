// The seccomp program built into pi-sandbox is the one libseccomp compiles from the same
// table now: the build-time compilation (seccomp_bpf_main.cpp) cannot drift from the rules.
#include "sandbox/linux/seccomp.hpp"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pisandbox::sandbox::linux_ {
namespace {

TEST(Seccomp, ThePrecompiledProgramsAreWhatLibseccompCompilesNow) {
  for (const UnixSockets unix : {UnixSockets::Refused, UnixSockets::Brokered}) {
    auto now = compile_seccomp(seccomp_rules(unix));
    ASSERT_TRUE(now) << now.error().describe();
    const auto built = precompiled_seccomp(unix);
    ASSERT_EQ(now->size(), built.size());
    EXPECT_EQ(std::memcmp(now->data(), built.data(), built.size() * sizeof(sock_filter)), 0);
  }
}

/// Runs `body` in a child process with no_new_privs and the program of `rules` loaded;
/// returns its exit code.
template <typename Body>
int in_filtered_child(const std::vector<SeccompRule>& rules, Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
    auto loaded = apply_seccomp(rules);
    if (!loaded || loaded->get() >= 0) ::_exit(101);  // no Notify rows: no listener
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

TEST(Seccomp, TheLoadedProgramRefusesWithTheTablesErrno) {
  const int code = in_filtered_child(seccomp_rules(), [] {
    if (::syscall(SYS_keyctl, 0, 0, 0, 0, 0) != -1 || errno != EPERM) return 1;
    if (::syscall(SYS_clone3, nullptr, 0) != -1 || errno != ENOSYS) return 2;
    if (::getpid() <= 0) return 3;
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(Seccomp, AnotherTableIsCompiledAtRunTime) {
  const std::vector<SeccompRule> rules = {{"getppid", {}, EACCES, "test"}};
  const int code = in_filtered_child(rules, [] {
    if (::syscall(SYS_getppid) != -1 || errno != EACCES) return 1;
    if (::syscall(SYS_keyctl, 0, 0, 0, 0, 0) == -1 && errno == EPERM) return 2;
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(Seccomp, UnixDatagramSocketsAndPairsAreRefusedStreamPairsWork) {
  const int code = in_filtered_child(seccomp_rules(), [] {
    if (::socket(AF_UNIX, SOCK_STREAM, 0) != -1 || errno != EPERM) return 1;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != -1 || errno != EPERM) return 2;
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return 3;
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, pair) != 0) return 4;
    return 0;
  });
  EXPECT_EQ(code, 0);
}

TEST(Seccomp, TheBrokeredTableSendsBindAndConnectToItsListener) {
  if (!unix_broker_unsupported().empty()) GTEST_SKIP() << unix_broker_unsupported();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
    auto listener = apply_seccomp(seccomp_rules(UnixSockets::Brokered));
    if (!listener || listener->get() < 0) ::_exit(101);
    // A datagram socket is refused; a stream socket is made; its connect waits for the
    // listener, which nobody reads: closing it makes the call fail with ENOSYS.
    if (::socket(AF_UNIX, SOCK_DGRAM, 0) != -1 || errno != EPERM) ::_exit(1);
    if (::socket(AF_UNIX, SOCK_RAW | SOCK_NONBLOCK, 0) != -1 || errno != EPERM) ::_exit(4);
    const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (sock < 0) ::_exit(2);
    listener->reset();
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, "/nonexistent");
    if (::connect(sock, reinterpret_cast<sockaddr*>(&address), sizeof address) != -1 ||
        errno != ENOSYS)
      ::_exit(3);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(SeccompTable, TheBrokeredTableHasNotifyRowsForBindAndConnectOnly) {
  std::vector<std::string> notified;
  for (const auto& rule : seccomp_rules(UnixSockets::Brokered))
    if (rule.action == SeccompAction::Notify) notified.push_back(rule.syscall);
  EXPECT_EQ(notified, (std::vector<std::string>{"connect", "bind"}));
  EXPECT_FALSE(has_notify_rows(seccomp_rules(UnixSockets::Refused)));
  EXPECT_TRUE(has_notify_rows(seccomp_rules(UnixSockets::Brokered)));
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
