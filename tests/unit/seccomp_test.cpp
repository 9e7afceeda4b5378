// The seccomp program built into pi-sandbox is the one libseccomp compiles from the same
// table now: the build-time compilation (seccomp_bpf_main.cpp) cannot drift from the rules.
#include "sandbox/linux/seccomp.hpp"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pisandbox::sandbox::linux_ {
namespace {

TEST(Seccomp, ThePrecompiledProgramIsWhatLibseccompCompilesNow) {
  auto now = compile_seccomp(seccomp_rules());
  ASSERT_TRUE(now) << now.error().describe();
  const auto built = precompiled_seccomp();
  ASSERT_EQ(now->size(), built.size());
  EXPECT_EQ(std::memcmp(now->data(), built.data(), built.size() * sizeof(sock_filter)), 0);
}

/// Runs `body` in a child process with no_new_privs and the program of `rules` loaded;
/// returns its exit code.
template <typename Body>
int in_filtered_child(const std::vector<SeccompRule>& rules, Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || !apply_seccomp(rules)) ::_exit(100);
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
  const std::vector<SeccompRule> rules = {{"getppid", std::nullopt, EACCES, "test"}};
  const int code = in_filtered_child(rules, [] {
    if (::syscall(SYS_getppid) != -1 || errno != EACCES) return 1;
    if (::syscall(SYS_keyctl, 0, 0, 0, 0, 0) == -1 && errno == EPERM) return 2;
    return 0;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
