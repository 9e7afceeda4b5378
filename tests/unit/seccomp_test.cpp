// The seccomp program built into pi-sandbox is the one libseccomp compiles from the same
// table now: the build-time compilation (seccomp_bpf_main.cpp) cannot drift from the rules.
#include "sandbox/linux/seccomp.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/openat2.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "require.hpp"

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
  PI_SANDBOX_REQUIRE(unix_broker_unsupported().empty(), unix_broker_unsupported());
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

TEST(SeccompTable, SetuidAndSetgidBitsAreRefusedWhereverAModeIsGiven) {
  const std::string why = "no setuid or setgid bit: the host's mount of the workspace honours it";
  auto rows = [&](const std::string& syscall, unsigned index) {
    return std::vector<SeccompRule>{{syscall, {{index, S_ISUID, S_ISUID}}, EPERM, why},
                                    {syscall, {{index, S_ISGID, S_ISGID}}, EPERM, why}};
  };
  std::vector<SeccompRule> expected;
  for (const auto& [syscall, index] :
       std::vector<std::pair<std::string, unsigned>>{{"chmod", 1},
                                                     {"fchmod", 1},
                                                     {"fchmodat", 2},
                                                     {"fchmodat2", 2},
                                                     {"creat", 1},
                                                     {"mknod", 1},
                                                     {"mknodat", 2}})
    std::ranges::copy(rows(syscall, index), std::back_inserter(expected));
  for (const std::uint64_t flag : {std::uint64_t{O_CREAT}, std::uint64_t{O_TMPFILE & ~O_DIRECTORY}})
    for (const std::uint64_t bit : {S_ISUID, S_ISGID}) {
      expected.push_back({"open", {{1, flag, flag}, {2, bit, bit}}, EPERM, why});
      expected.push_back({"openat", {{2, flag, flag}, {3, bit, bit}}, EPERM, why});
    }
  expected.push_back(
      {"openat2", {}, ENOSYS, "flags and mode unreadable by seccomp; callers fall back to openat"});
  for (const UnixSockets unix : {UnixSockets::Refused, UnixSockets::Brokered}) {
    std::vector<SeccompRule> mode_rows;
    for (const auto& rule : seccomp_rules(unix))
      if (rule.why == why || rule.syscall == "openat2") mode_rows.push_back(rule);
    EXPECT_EQ(mode_rows, expected);
  }
}

/// A directory under the test's temporary directory, removed with what it holds.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "pi-seccomp-mode.XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const char* name) const { return (path / name).string(); }
};

/// fchmodat2(2) (Linux 6.6) by number: glibc 2.36 has no wrapper.
constexpr long kFchmodat2 = 452;

TEST(Seccomp, SetuidAndSetgidModesAreRefusedOrdinaryModesWork) {
  const TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  const std::string file = dir / "f", made = dir / "made";
  const int existing = ::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  ASSERT_GE(existing, 0);
  ::close(existing);
  const bool have_fchmodat2 = ::syscall(kFchmodat2, AT_FDCWD, file.c_str(), 0644, 0) == 0;
  auto refused = [](long rc, int error = EPERM) { return rc == -1 && errno == error; };
  const int code = in_filtered_child(seccomp_rules(), [&] {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC, 04755);  // no O_CREAT: mode unread
    if (fd < 0) return 1;
    if (!refused(::chmod(file.c_str(), 04755)) || !refused(::chmod(file.c_str(), 02755))) return 2;
    if (!refused(::fchmod(fd, 04700)) || !refused(::fchmodat(AT_FDCWD, file.c_str(), 06755, 0)))
      return 3;
    if (have_fchmodat2 && !refused(::syscall(kFchmodat2, AT_FDCWD, file.c_str(), 02755, 0)))
      return 4;
    if (::chmod(file.c_str(), 0755) != 0 || ::fchmod(fd, 01777) != 0) return 5;
    if (have_fchmodat2 && ::syscall(kFchmodat2, AT_FDCWD, file.c_str(), 0700, 0) != 0) return 6;
    if (!refused(::open(made.c_str(), O_CREAT | O_WRONLY, 04755)) ||
        !refused(::openat(AT_FDCWD, made.c_str(), O_CREAT | O_EXCL | O_WRONLY, 02711)) ||
        !refused(::creat(made.c_str(), 04755)))
      return 7;
    if (!refused(::open(dir.path.c_str(), O_TMPFILE | O_WRONLY, 04700)) ||
        !refused(::mknod(made.c_str(), S_IFREG | 04755, 0)) ||
        !refused(::mknodat(AT_FDCWD, made.c_str(), S_IFREG | 02755, 0)))
      return 8;
    open_how how{};
    how.flags = O_CREAT | O_WRONLY;
    how.mode = 04755;
    if (!refused(::syscall(SYS_openat2, AT_FDCWD, made.c_str(), &how, sizeof how), ENOSYS))
      return 9;
    const int created = ::open(made.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
    if (created < 0 || ::close(created) != 0 || ::unlink(made.c_str()) != 0) return 10;
    if (::mknod(made.c_str(), S_IFREG | 0644, 0) != 0 || ::unlink(made.c_str()) != 0) return 11;
    // mkdir(2) has no row: the kernel drops these bits from its mode.
    struct stat st {};
    if (::mkdir(made.c_str(), 06755) != 0 || ::stat(made.c_str(), &st) != 0 ||
        (st.st_mode & 07777) != 0755)
      return 12;
    return 0;
  });
  EXPECT_EQ(code, 0);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, have_fchmodat2 ? 0700U : 01777U);
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
