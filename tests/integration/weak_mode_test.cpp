// The weaker sandbox where user namespaces cannot be made (docs/security.md, "Where namespaces
// cannot be made"), on this machine: pi-sandbox runs through pi-sandbox-deny-userns, whose seccomp
// filter refuses new user namespaces as Docker's default profile does. Runs as root and as an
// unprivileged user (scripts/test runs every integration binary twice). The network through the
// proxy is tested in network_test.cpp (WeakMode*), where the test network is.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "core/unique_fd.hpp"
#include "deny_userns.hpp"
#include "harness.hpp"

namespace pisandbox::testing {
namespace {

/// Landlock's ABI on this kernel (landlock_create_ruleset(2) with LANDLOCK_CREATE_RULESET_VERSION).
long landlock_abi() {
  return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1U << 0);
}

class WeakMode : public ::testing::Test {
 protected:
  void SetUp() override {
    PI_SANDBOX_REQUIRE(landlock_abi() >= 1, "Landlock is unavailable: no weaker sandbox");
  }
  /// `pi-sandbox run --cwd <ws> -c <command>` where no user namespace can be made.
  RunResult run(const std::string& command) const {
    return run_process({deny_userns_wrapper(), sandbox_binary(), "run", "--no-prompt", "--cwd",
                        s.ws.string(), "-c", command},
                       s.env());
  }
  Scratch s;
};

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST_F(WeakMode, IsChosenAndSaidOnceWhenNamespacesAreRefused) {
  const RunResult r = run("echo hi");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hi\n");
  EXPECT_EQ(count(r.err, "pi-sandbox: weaker sandbox, user namespaces cannot be made here"), 1U)
      << r.err;
}

TEST_F(WeakMode, DoctorAndPolicySaySo) {
  const RunResult doctor =
      run_process({deny_userns_wrapper(), sandbox_binary(), "doctor"}, s.env());
  EXPECT_EQ(doctor.exit_code, 1);  // the namespaces are MISSING
  EXPECT_NE(doctor.out.find("weaker   the weaker sandbox (where namespaces cannot be made): runs "
                            "every command meanwhile (unshare(CLONE_NEWUSER|CLONE_NEWNS|"
                            "CLONE_NEWPID): EPERM (Operation not permitted); Landlock ABI "),
            std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("ok       a sandboxed /bin/true: works"), std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("pi-sandbox runs commands here in the weaker sandbox until the "
                            "MISSING items are fixed.\n"),
            std::string::npos)
      << doctor.out;
  const RunResult policy = run_process(
      {deny_userns_wrapper(), sandbox_binary(), "policy", "--cwd", s.ws.string()}, s.env());
  EXPECT_EQ(policy.exit_code, 0) << policy.err;
  EXPECT_NE(policy.out.find("mode: the weaker sandbox, user namespaces cannot be made here "
                            "(unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID): EPERM"),
            std::string::npos)
      << policy.out;
}

TEST_F(WeakMode, IsChosenWhereProcIsMaskedAsInAContainer) {
  // Docker masks /proc paths with bind mounts; a new proc mount is then refused in a user
  // namespace (mount_namespaces(7)): the namespaces are made, /proc cannot be.
  PI_SANDBOX_REQUIRE(::access("/usr/bin/unshare", X_OK) == 0, "unshare(1) is not installed");
  const std::string inside = "mount --bind /dev/null /proc/cpuinfo && exec \"$0\" \"$@\"";
  const RunResult r =
      run_process({"/usr/bin/unshare", "-r", "-m", "/bin/sh", "-c", inside, sandbox_binary(), "run",
                   "--no-prompt", "--cwd", s.ws.string(), "-c", "echo ran"},
                  s.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "ran\n");
  EXPECT_EQ(count(r.err, "pi-sandbox: weaker sandbox, user namespaces cannot be made here"), 1U)
      << r.err;
  const RunResult doctor = run_process(
      {"/usr/bin/unshare", "-r", "-m", "/bin/sh", "-c", inside, sandbox_binary(), "doctor"},
      s.env());
  EXPECT_NE(doctor.out.find("runs every command meanwhile (mount(\"proc\", \"/proc\"): EPERM"),
            std::string::npos)
      << doctor.out;
}

TEST_F(WeakMode, TheCommandsExitStatusComesBack) {
  EXPECT_EQ(run("exit 7").exit_code, 7);
  EXPECT_EQ(run("kill -TERM $$").exit_code, 128 + SIGTERM);
  EXPECT_EQ(run("no-such-program-pi").exit_code, 127);
}

TEST_F(WeakMode, TheHomesSecretsAreUnreadable) {
  // HOME is the command's private home layer; the real home, named by its path, is unreadable.
  const std::string home = s.home.string();
  const RunResult r = run("cat " + home + "/.ssh/id_rsa; ls " + home +
                          "/.ssh; cat ~/.gitconfig; echo cache > ~/.cache-file && cat "
                          "~/.cache-file; echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[user]\n\tname = Sandbox Test\n\temail = t@example.com\ncache\ndone\n");
  EXPECT_FALSE(fs::exists(s.home / ".cache-file"));
  EXPECT_NE(r.err.find("cat: " + (s.home / ".ssh/id_rsa").string() + ": Permission denied"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ls: cannot open directory '" + (s.home / ".ssh").string() +
                       "': Permission denied"),
            std::string::npos)
      << r.err;
}

TEST_F(WeakMode, WritesOutsideTheWritableRootsAreRefused) {
  const std::string probe = "/tmp/pi-sandbox-weak-probe-" + std::to_string(::getpid());
  const RunResult r =
      run("touch /etc/pi-sandbox-weak-probe; touch " + s.home.string() + "/made; touch " + probe +
          "; echo ok > in-ws; echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "t\n");
  for (const std::string& path :
       {std::string("/etc/pi-sandbox-weak-probe"), (s.home / "made").string(), probe})
    EXPECT_NE(r.err.find("touch: cannot touch '" + path + "': Permission denied"),
              std::string::npos)
        << r.err;
  EXPECT_FALSE(fs::exists("/etc/pi-sandbox-weak-probe"));
  EXPECT_FALSE(fs::exists(s.home / "made"));
  EXPECT_FALSE(fs::exists(probe));
  EXPECT_EQ(read_file(s.ws / "in-ws"), "ok\n");
}

TEST_F(WeakMode, ProtectedPathsAreHeld) {
  const std::map<std::string, std::string> env = s.env();
  ASSERT_EQ(run_process({"/usr/bin/git", "init", "-q", s.ws.string()}, env).exit_code, 0);
  write_file(s.ws / ".vscode/settings.json", "{}\n");
  const RunResult r =
      run("echo evil > .vscode/settings.json; echo '#!/bin/sh' > .git/hooks/pre-commit; "
          "git config core.fsmonitor 'touch pwned'; echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_EQ(read_file(s.ws / ".vscode/settings.json"), "{}\n");
  EXPECT_FALSE(fs::exists(s.ws / ".git/hooks/pre-commit"));
  EXPECT_EQ(read_file(s.ws / ".git/config").find("fsmonitor"), std::string::npos);
  EXPECT_NE(r.err.find("put back " + (s.ws / ".vscode").string() + " as it was"), std::string::npos)
      << r.err;
}

TEST_F(WeakMode, WhenPiSandboxIsKilledTheReaperEndsTheCommandAndPutsBack) {
  write_file(s.ws / ".vscode/settings.json", "{}\n");
  const std::string marker = "pi-weak-killed-" + std::to_string(::getpid());
  const pid_t pid = spawn_process(
      {deny_userns_wrapper(), sandbox_binary(), "run", "--no-prompt", "--cwd", s.ws.string(), "-c",
       "echo evil > .vscode/settings.json; exec sh -c 'sleep 300; true' " + marker},
      s.env());
  const fs::path settings = s.ws / ".vscode/settings.json";
  for (int i = 0; i < 500 && read_file(settings) != "evil\n"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(read_file(settings), "evil\n");
  ::kill(pid, SIGKILL);
  wait_process(pid);
  EXPECT_TRUE(wait_until_gone(marker));
  for (int i = 0; i < 250 && read_file(s.ws / ".vscode/settings.json") != "{}\n"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(read_file(s.ws / ".vscode/settings.json"), "{}\n");
}

TEST_F(WeakMode, GitWorksInTheWorkspace) {
  const RunResult r =
      run("git init -q r && cd r && echo a > a && git add a && git -c user.name=t -c "
          "user.email=t@example.invalid commit -qm one && git log --format=%s");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "one\n");
}

/// A TCP listener of the test on the host's 127.0.0.1, non-blocking; its port in `port`.
core::UniqueFd host_listener(std::uint16_t& port) {
  core::UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd.get(), 8) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
    return {};
  port = ntohs(address.sin_port);
  return fd;
}

TEST_F(WeakMode, ADirectConnectionToAHostPortIsRefused) {
  std::uint16_t port = 0;
  const core::UniqueFd listener = host_listener(port);
  ASSERT_TRUE(listener);
  const std::string target = "/dev/tcp/127.0.0.1/" + std::to_string(port);
  const RunResult r = run("exec 3<>" + target + " && echo connected; echo x > /dev/udp/127.0.0.1/" +
                          std::to_string(port) + " && echo sent; echo done");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "done\n");
  EXPECT_NE(r.err.find(target + ": Permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Operation not permitted"), std::string::npos) << r.err;
  EXPECT_LT(::accept(listener.get(), nullptr, nullptr), 0);  // nothing ever connected
  EXPECT_EQ(errno, EAGAIN);
}

TEST_F(WeakMode, AHostUnixSocketIsDecidedAsTheHosts) {
  // On the file system of the home and of /tmp, which the full sandbox replaces with private
  // tmpfs mounts: here they are the host's, and their sockets are the host's.
  const fs::path path = s.root / "host.sock";
  core::UniqueFd host(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(::bind(host.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(host.get(), 4), 0);
  const RunResult r =
      run("python3 -c 'import socket\ns = socket.socket(socket.AF_UNIX)\ntry:\n "
          "s.connect(\"" +
          path.string() + "\"); print(\"connected\")\nexcept OSError as e: print(e.errno)'");
  EXPECT_EQ(r.out, "13\n") << r.err;  // EACCES: no one may approve a host socket here
  EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + path.string()), std::string::npos)
      << r.err;
  EXPECT_LT(::accept(host.get(), nullptr, nullptr), 0);
}

TEST_F(WeakMode, PiSandboxsOwnProcessesCannotBeSignalled) {
  // $PPID is the reaper; 0 the process group pi-sandbox shares; -1 every process of the user.
  const RunResult r =
      run("for target in $PPID 0 -1; do kill -0 $target; echo $?; done; sleep 100 & kill $!; "
          "echo own $?");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n1\n1\nown 0\n");
  for (const std::string& target : {std::string("(0)"), std::string("(-1)")})
    EXPECT_NE(r.err.find("kill: " + target + " - Operation not permitted"), std::string::npos)
        << r.err;
}

TEST_F(WeakMode, NoProcessOfTheCommandOutlivesIt) {
  const std::string marker = "pi-weak-outlive-" + std::to_string(::getpid());
  // `sh -c '...' <marker>`: the marker is $0, in the command line, and sleep is not exec'd.
  const RunResult r =
      run("(sh -c 'sleep 300; true' " + marker + " &); setsid sh -c 'sleep 300; true' " + marker +
          " >/dev/null 2>&1 & echo started");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "started\n");
  EXPECT_TRUE(wait_until_gone(marker));
}

}  // namespace
}  // namespace pisandbox::testing
