// The Linux sandbox against the real kernel: what a command can and cannot do under the
// default policy (docs/security.md; docs/cases.md, C-01 to C-04, C-09). Runs as root and as an
// unprivileged user (scripts/test runs this binary twice).
#include <pwd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

bool have(const std::string& program) {
  return run_process({"/bin/sh", "-c", "command -v " + program}).exit_code == 0;
}

TEST(Sandbox, WritesInsideTheWorkspaceReachTheHost) {
  Scratch s;
  const RunResult r =
      s.run("echo hello > made.txt && mkdir -p d/e && echo ok > d/e/f && cat made.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "hello\n");
  EXPECT_EQ(read_file(s.ws / "made.txt"), "hello\n");
  EXPECT_EQ(read_file(s.ws / "d/e/f"), "ok\n");
}

TEST(Sandbox, TheHostOutsideTheWorkspaceIsReadOnly) {
  Scratch s;
  // root's home is another user's home for an unprivileged run (not even traversable), and
  // not the (fake) home of a root run (read-only).
  const passwd* root = ::getpwnam("root");
  ASSERT_NE(root, nullptr);
  const std::string probe = std::string(root->pw_dir) + "/pi-sandbox-probe";
  const RunResult r = s.run("touch /etc/pi-sandbox-probe; touch /usr/pi-sandbox-probe; touch " +
                            probe + "; echo done");
  const std::string root_error = ::geteuid() == 0 ? "Read-only file system" : "Permission denied";
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("touch: cannot touch '/etc/pi-sandbox-probe': Read-only file system"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("touch: cannot touch '/usr/pi-sandbox-probe': Read-only file system"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("touch: cannot touch '" + probe + "': " + root_error), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists("/etc/pi-sandbox-probe"));
  std::error_code ec;
  EXPECT_FALSE(fs::exists(probe, ec));
}

TEST(Sandbox, TheHomeIsHiddenButGitConfigIsReadable) {
  Scratch s;
  const RunResult r =
      s.run("cat ~/.ssh/id_rsa; cat ~/.gitconfig; echo cache > ~/.cache-file && cat ~/.cache-file");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find(".ssh/id_rsa: No such file or directory"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "[user]\n\tname = Sandbox Test\n\temail = t@example.com\ncache\n");
  // The throw-away home layer never reaches the real home.
  EXPECT_FALSE(fs::exists(s.home / ".cache-file"));
  const RunResult write = s.run("echo x >> ~/.gitconfig");
  EXPECT_NE(write.exit_code, 0);
  EXPECT_NE(write.err.find("Read-only file system"), std::string::npos) << write.err;
  EXPECT_EQ(read_file(s.home / ".gitconfig"),
            "[user]\n\tname = Sandbox Test\n\temail = t@example.com\n");
}

TEST(Sandbox, PrivateTempIsWritableAndGoneAfterwards) {  // docs/cases.md, C-02
  Scratch s;
  const std::string host_file = "/tmp/pi-sandbox-host-visible-" + std::to_string(::getpid());
  write_file(host_file, "host\n");
  const RunResult r = s.run(
      "touch /tmp/t && cat /tmp/t && d=$(mktemp -d) && test -d \"$d\" && echo \"$TMPDIR $TMP "
      "$TEMP\" && touch /var/tmp/v && ls " +
      host_file + " 2>&1; echo private > /tmp/mine");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "/tmp /tmp /tmp\nls: cannot access '" + host_file + "': No such file or directory\n");
  EXPECT_FALSE(fs::exists("/tmp/mine"));
  EXPECT_EQ(read_file(host_file), "host\n");
  fs::remove(host_file);
}

TEST(Sandbox, GitInitAddCommitWorkAndHooksAreProtectedLater) {  // docs/cases.md, C-03
  PI_SANDBOX_REQUIRE(have("git"), "git is not installed");
  Scratch s;
  const RunResult init = s.run(
      "git init -q && git add -A && git commit -qm x --allow-empty && git remote add origin "
      "https://example.com/r.git && git log --format=%s");
  EXPECT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(init.out, "x\n");
  EXPECT_EQ(init.err, "");
  const RunResult hook = s.run("printf '#!/bin/sh\\n' > .git/hooks/pre-commit");
  EXPECT_EQ(hook.exit_code, 1);
  EXPECT_NE(hook.err.find(".git/hooks/pre-commit: Read-only file system"), std::string::npos)
      << hook.err;
  EXPECT_FALSE(fs::exists(s.ws / ".git/hooks/pre-commit"));
  const RunResult status = s.run("git status --porcelain; git add -A; git status --porcelain");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out, "");  // placeholders are invisible to git
}

TEST(Sandbox,
     AHookWrittenByTheCommandThatCreatedTheRepositoryIsQuarantined) {  // docs/cases.md, C-03
  PI_SANDBOX_REQUIRE(have("git"), "git is not installed");
  Scratch s;
  const RunResult r = s.run("git init -q && printf '#!/bin/sh\\n' > .git/hooks/post-checkout");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string prefix = "pi-sandbox: moved " + (s.ws / ".git/hooks/post-checkout").string() +
                             " to the quarantine (a Git hook in a repository the command "
                             "created: git on the host would run it); restore with: pi-sandbox "
                             "quarantine restore ";
  EXPECT_NE(r.err.find(prefix), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(s.ws / ".git/hooks/post-checkout"));
}

TEST(Sandbox, PythonVirtualEnvironmentsWork) {
  PI_SANDBOX_REQUIRE(fs::exists("/usr/bin/python3"), "/usr/bin/python3 is not installed");
  Scratch s;
  const RunResult r = s.run("/usr/bin/python3 -m venv .venv && .venv/bin/python -c 'print(1)'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "1\n");
}

/// Every kind of change to a protected path fails, and the host copy stays as it was.
/// `extra`: more `pi-sandbox run` arguments (a strict configuration).
void expect_protected(const Scratch& s, const std::string& rel, bool exists_before,
                      const std::vector<std::string>& extra = {}) {
  const fs::path host = s.ws / rel;
  const std::string before = exists_before ? read_file(host) : "";
  const std::string p = "'" + rel + "'";
  const struct {
    const char* what;
    std::string command;
  } attempts[] = {
      {"write", "echo evil >> " + p},
      {"truncate", ": > " + p},
      {"rename onto", "echo evil > decoy && mv -f decoy " + p},
      {"rename away", "mv " + p + " moved-away"},
      {"remove", "rm -rf " + p},
      {"hard link", "echo evil > decoy2 && ln -f decoy2 " + p},
      {"symlink", "ln -sfn /etc/passwd " + p},
  };
  for (const auto& attempt : attempts) {
    const RunResult r = s.run(attempt.command + " && echo CHANGED", extra);
    EXPECT_EQ(r.out.find("CHANGED"), std::string::npos) << rel << ": " << attempt.what;
    EXPECT_NE(r.exit_code, 0) << rel << ": " << attempt.what;
    EXPECT_EQ(fs::exists(fs::symlink_status(host)), exists_before) << rel << ": " << attempt.what;
    if (exists_before && fs::is_regular_file(host)) {
      EXPECT_EQ(read_file(host), before) << rel;
    }
  }
  // A copy is fine (reads are allowed); the protected original stays where it was.
  fs::remove_all(s.ws / "moved-away");
}

/// Every kind of making a guarded name (docs/security.md, "The guard") may succeed inside,
/// but the name is never on the host afterwards, and what was made is reported as moved.
void expect_guarded(const Scratch& s, const std::string& rel) {
  const fs::path host = s.ws / rel;
  const std::string p = "'" + rel + "'";
  const struct {
    const char* what;
    std::string command;
  } attempts[] = {
      {"write", "echo evil >> " + p},
      {"rename onto", "echo evil > decoy && mv -f decoy " + p},
      {"hard link", "echo evil > decoy2 && ln -f decoy2 " + p},
      {"symlink", "ln -sfn /etc/passwd " + p},
  };
  for (const auto& attempt : attempts) {
    const RunResult r = s.run(attempt.command + " && echo CHANGED");
    EXPECT_FALSE(fs::exists(fs::symlink_status(host))) << rel << ": " << attempt.what;
    if (r.out.find("CHANGED") != std::string::npos) {
      EXPECT_NE(r.err.find("pi-sandbox: moved " + host.string() + " to the quarantine"),
                std::string::npos)
          << rel << ": " << attempt.what << "\n"
          << r.err;
    }
  }
}

TEST(Sandbox, ProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement) {
  Scratch s;
  write_file(s.ws / ".bashrc", "existing rc\n");
  write_file(s.ws / "sub/.env.local", "TOKEN=1\n");
  write_file(s.ws / "certs/server.pem", "CERT\n");
  write_file(s.ws / ".pi/settings.json", "{}\n");
  for (const auto& rel : {".bashrc", "sub/.env.local", "certs/server.pem", ".pi/settings.json"})
    expect_protected(s, rel, true);
  for (const auto& rel : {".mcp.json", ".ripgreprc", ".pi/sandbox.json", ".profile"})
    expect_guarded(s, rel);
  for (const auto& rel :
       {".vscode/settings.json", ".claude/commands/x.md", ".idea/workspace.xml"}) {
    const RunResult r = s.run("mkdir -p \"$(dirname " + std::string(rel) + ")\"; echo x > " + rel);
    EXPECT_FALSE(fs::exists(s.ws / rel)) << rel;
  }
  // A missing secret is ordinary to create (`cp .env.example .env`); existing ones are held.
  const RunResult secret = s.run("echo A=1 > .env && mkdir secrets && echo t > secrets/token");
  EXPECT_EQ(secret.exit_code, 0) << secret.err;
  EXPECT_EQ(read_file(s.ws / ".env"), "A=1\n");
  expect_protected(s, ".env", true);
  fs::remove(s.ws / ".env");
  fs::remove_all(s.ws / "secrets");
  fs::remove_all(s.ws / ".claude");  // the parent the command made stays (it is ordinary)
  // Nothing of the guard is left on the host.
  EXPECT_EQ(list_dir(s.ws),
            (std::vector<std::string>{".bashrc", ".pi", "certs", "decoy", "decoy2", "sub"}));
  EXPECT_EQ(list_dir(s.ws / ".pi"), (std::vector<std::string>{"settings.json"}));
}

TEST(Sandbox, StrictProtectedPathsRefuseWriteCreateRenameLinkAndSymlinkReplacement) {
  Scratch s;
  const fs::path strict = s.root / "strict.json";
  write_file(strict, R"({"filesystem": {"protection": "strict"}})");
  const std::vector<std::string> extra = {"--config", strict.string()};
  write_file(s.ws / ".bashrc", "existing rc\n");
  write_file(s.ws / "sub/.env.local", "TOKEN=1\n");
  write_file(s.ws / "certs/server.pem", "CERT\n");
  write_file(s.ws / ".pi/settings.json", "{}\n");
  for (const auto& rel : {".bashrc", "sub/.env.local", "certs/server.pem", ".pi/settings.json"})
    expect_protected(s, rel, true, extra);
  for (const auto& rel : {".env", ".mcp.json", ".ripgreprc", ".pi/sandbox.json", ".profile"})
    expect_protected(s, rel, false, extra);
  for (const auto& rel :
       {".vscode/settings.json", ".claude/commands/x.md", "secrets/token", ".idea/workspace.xml"}) {
    const RunResult r =
        s.run("mkdir -p \"$(dirname " + std::string(rel) + ")\"; echo x > " + rel, extra);
    EXPECT_NE(r.exit_code, 0) << rel;
    EXPECT_FALSE(fs::exists(s.ws / rel)) << rel;
  }
  // Nothing of the placeholders is left on the host.
  EXPECT_EQ(list_dir(s.ws),
            (std::vector<std::string>{".bashrc", ".pi", "certs", "decoy", "decoy2", "sub"}));
  EXPECT_EQ(list_dir(s.ws / ".pi"), (std::vector<std::string>{"settings.json"}));
}

TEST(Sandbox, ARenameOfAProtectedPathsParentIsRefused) {
  PI_SANDBOX_REQUIRE(have("git"), "git is not installed");
  Scratch s;
  ASSERT_EQ(s.run("git init -q").exit_code, 0);
  const RunResult r =
      s.run("mv .git .git-old && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Device or resource busy"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(s.ws / ".git-old"));
}

TEST(Sandbox, DotfileSymlinksIntoTheHomeStillWork) {  // docs/cases.md, C-01
  Scratch s;
  write_file(s.home / "dotfiles/bashrc", "rc\n");
  fs::create_symlink(s.home / "dotfiles/bashrc", s.home / ".bashrc");
  fs::create_symlink(s.home / "dotfiles/missing", s.home / ".profile");  // dangling
  const RunResult hi = s.run("echo hi", {}, s.home);
  EXPECT_EQ(hi.exit_code, 0) << hi.err;
  EXPECT_EQ(hi.out, "hi\n");
  const RunResult write = s.run("echo x >> ~/.bashrc", {}, s.home);
  EXPECT_NE(write.exit_code, 0);
  EXPECT_NE(write.err.find("Read-only file system"), std::string::npos) << write.err;
  EXPECT_EQ(read_file(s.home / "dotfiles/bashrc"), "rc\n");
  const RunResult dangling = s.run("echo x >> ~/.profile; rm -f ~/.profile", {}, s.home);
  EXPECT_NE(dangling.exit_code, 0);
  EXPECT_FALSE(fs::exists(s.home / "dotfiles/missing"));
  EXPECT_TRUE(fs::is_symlink(s.home / ".profile"));
}

TEST(Sandbox, AProtectedNameLinkedToADirectoryStillLetsCommandsRun) {  // docs/cases.md, C-04
  Scratch s;
  fs::create_directories(s.ws / "sub/.vscode");
  fs::create_directory_symlink("sub/.vscode", s.ws / ".vscode");
  const RunResult ls = s.run("ls");
  EXPECT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "sub\n");  // nothing of the guard shows (a missing `secrets/` is creatable)
  const RunResult via_link = s.run("echo x > .vscode/tasks.json");
  EXPECT_NE(via_link.exit_code, 0);
  const RunResult direct = s.run("echo x > sub/.vscode/tasks.json");
  EXPECT_NE(direct.exit_code, 0);
  EXPECT_FALSE(fs::exists(s.ws / "sub/.vscode/tasks.json"));
  EXPECT_TRUE(fs::is_symlink(s.ws / ".vscode"));
}

TEST(Sandbox, HostUnixSocketsAreRefusedButSocketpairWorks) {  // docs/cases.md, C-09
  Scratch s;
  // A real AF_UNIX server on the host, in the workspace where the sandbox can see the path.
  const fs::path path = s.ws / "server.sock";
  const int server = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(server, 4), 0);
  const RunResult r = s.run(
      "/usr/bin/python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); "
      "s.connect('" +
      path.string() +
      "')\" 2>&1 | tail -1; /usr/bin/python3 -c \"import socket; "
      "a,b=socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())\"");
  ::close(server);
  // The host's socket (bound by this test, not by the sandbox) is refused by the broker
  // (docs/host-ipc.md, "Host sockets"), or by seccomp where the kernel cannot broker.
  const bool brokered = unix_sockets_brokered();
  EXPECT_EQ(r.out, brokered ? "PermissionError: [Errno 13] Permission denied\npair\n"
                            : "PermissionError: [Errno 1] Operation not permitted\npair\n")
      << r.err;
}

TEST(Sandbox, TmuxAgainstARunningServerIsRefused) {  // docs/cases.md, C-09
  PI_SANDBOX_REQUIRE(have("tmux"), "tmux is not installed");
  Scratch s;
  const std::string sock = (s.root / "tmux.sock").string();
  ASSERT_EQ(run_process({"/usr/bin/tmux", "-S", sock, "new-session", "-d", "-s", "pi", "sleep 60"})
                .exit_code,
            0);
  const RunResult host = run_process({"/usr/bin/tmux", "-S", sock, "ls"});
  EXPECT_EQ(host.exit_code, 0);
  // The socket's directory is outside the workspace but readable: only the socket is refused.
  const RunResult r = s.run("tmux -S " + sock + " ls");
  run_process({"/usr/bin/tmux", "-S", sock, "kill-server"});
  EXPECT_EQ(r.exit_code, 1);
  const bool brokered = unix_sockets_brokered();
  EXPECT_NE(r.err.find(brokered ? "(Permission denied)" : "(Operation not permitted)"),
            std::string::npos)
      << r.err;
  if (brokered) {
    EXPECT_NE(r.err.find("pi-sandbox: host socket refused: " + sock + ": "), std::string::npos)
        << r.err;
  }
}

TEST(Sandbox, NewUserNamespacesAndMountsAreRefused) {
  Scratch s;
  const RunResult r = s.run("unshare -Ur true");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Operation not permitted"), std::string::npos) << r.err;
  const RunResult m = s.run("mount -t tmpfs none /tmp");
  EXPECT_NE(m.exit_code, 0);
}

TEST(Sandbox, ExitCodesAndSignalsMapAsDocumented) {
  Scratch s;
  EXPECT_EQ(s.run("exit 3").exit_code, 3);
  EXPECT_EQ(s.run("exit 0").exit_code, 0);
  EXPECT_EQ(s.run("kill -TERM $$").exit_code, 128 + SIGTERM);
  EXPECT_EQ(s.run("kill -KILL $$").exit_code, 128 + SIGKILL);
  const RunResult missing = run_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "no-such-program-xyz"}, s.env());
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_EQ(missing.err, "pi-sandbox: no-such-program-xyz: No such file or directory\n");
  const RunResult argv = run_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "/bin/echo", "a b", "c"}, s.env());
  EXPECT_EQ(argv.exit_code, 0);
  EXPECT_EQ(argv.out, "a b c\n");
}

// A workspace of many repositories (a bind of each `.git/hooks`, held open until the root is
// switched) sets up under the usual soft RLIMIT_NOFILE, which pid 1 lifts to the hard one for
// itself; the command gets the caller's soft limit back.
TEST(Sandbox, AWorkspaceOfManyRepositoriesSetsUpAndTheCommandKeepsTheCallersLimit) {
  rlimit files{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &files), 0);
  PI_SANDBOX_REQUIRE(files.rlim_max >= 4096, "the hard RLIMIT_NOFILE is below 4096");
  Scratch s;
  for (int i = 0; i < 150; ++i)
    fs::create_directories(s.ws / ("r" + std::to_string(i)) / ".git/hooks");
  const RunResult r =
      run_process({"/bin/sh", "-c", "ulimit -Sn 256 && exec \"$0\" \"$@\"", sandbox_binary(), "run",
                   "--cwd", s.ws.string(), "-c", "ulimit -n; ls r149/.git"},
                  s.env());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "256\nhooks\n");
}

TEST(Sandbox, SetupFailuresExit125WithOneMessage) {
  Scratch s;
  const RunResult r = run_process(
      {sandbox_binary(), "run", "--cwd", (s.root / "missing").string(), "-c", "true"}, s.env());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err, "pi-sandbox: --cwd \"" + (s.root / "missing").string() +
                       "\": realpath: ENOENT (No such file or directory)\n");
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

/// Runs a Python snippet in the sandbox and returns its stdout.
RunResult python_in_sandbox(const Scratch& s, const std::string& code) {
  write_file(s.ws / "probe.py", code);
  return s.run("/usr/bin/python3 probe.py");
}

TEST(Seccomp, DangerousSyscallsFailWithTheDocumentedErrno) {
  PI_SANDBOX_REQUIRE(fs::exists("/usr/bin/python3"), "/usr/bin/python3 is not installed");
  Scratch s;
  const RunResult r = python_in_sandbox(s, R"(
import ctypes, errno, fcntl, termios
libc = ctypes.CDLL(None, use_errno=True)
def call(name, nr, *args):
    rc = libc.syscall(nr, *args)
    print(name, rc, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()) if rc < 0 else "ok")
call("keyctl", 250, 0, 0, 0, 0)
call("add_key", 248, 0, 0, 0, 0, 0)
call("bpf", 321, 0, 0, 0)
call("perf_event_open", 298, 0, 0, 0, 0, 0)
call("userfaultfd", 323, 0)
call("io_uring_setup", 425, 1, 0)
call("clone3", 435, 0, 0)
call("setns", 308, 0, 0)
call("pivot_root", 155, 0, 0)
call("open_tree", 428, -100, 0, 0)
call("socket_vsock", 41, 40, 1, 0)
try:
    fcntl.ioctl(1, termios.TIOCSTI, b"x")
except OSError as e:
    print("TIOCSTI", errno.errorcode[e.errno])
)");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "keyctl -1 EPERM\nadd_key -1 EPERM\nbpf -1 EPERM\nperf_event_open -1 EPERM\n"
            "userfaultfd -1 EPERM\nio_uring_setup -1 EPERM\nclone3 -1 ENOSYS\nsetns -1 EPERM\n"
            "pivot_root -1 EPERM\nopen_tree -1 EPERM\nsocket_vsock -1 EPERM\nTIOCSTI EPERM\n");
}

TEST(Seccomp, X32SyscallsKillTheProcess) {
  PI_SANDBOX_REQUIRE(fs::exists("/usr/bin/python3"), "/usr/bin/python3 is not installed");
  Scratch s;
  // getpid through the x32 ABI (__X32_SYSCALL_BIT | 39): a foreign ABI, so SIGSYS kills.
  const RunResult r = python_in_sandbox(
      s, "import ctypes\nctypes.CDLL(None).syscall(0x40000000 | 39)\nprint('survived')\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.exit_code, 128 + SIGSYS);
}

/// The permission bits of `path` on the host (07777 of st_mode).
unsigned mode_of(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : ~0U;
}

// docs/security.md, "Privilege bits": the workspace's mount on the host honours setuid.
TEST(Seccomp, ASetuidOrSetgidBitIsRefusedOrdinaryModesWork) {
  Scratch s;
  const RunResult suid = s.run("cp /usr/bin/id s && chmod 4755 s");
  EXPECT_EQ(suid.exit_code, 1);
  EXPECT_EQ(suid.err, "chmod: changing permissions of 's': Operation not permitted\n");
  const RunResult bits = s.run(
      "chmod u+s s; chmod g+s s; install -m 4755 /usr/bin/id i; mkdir d; chmod g+s d; mkdir -m "
      "2755 "
      "e; echo $?");
  EXPECT_EQ(bits.exit_code, 0);
  EXPECT_EQ(bits.out, "1\n");
  EXPECT_EQ(bits.err,
            "chmod: changing permissions of 's': Operation not permitted\n"
            "chmod: changing permissions of 's': Operation not permitted\n"
            "install: cannot change permissions of 'i': Operation not permitted\n"
            "chmod: changing permissions of 'd': Operation not permitted\n"
            "mkdir: cannot change permissions of 'e': Operation not permitted\n");
  const RunResult ordinary = s.run(
      "chmod 755 s && install -m 750 /usr/bin/id j && printf data > o && chmod 640 o && "
      "cp -p o o2 && chmod 1777 d && mkdir -m 700 m && stat -c '%a %n' s j o2 d e m");
  EXPECT_EQ(ordinary.exit_code, 0) << ordinary.err;
  EXPECT_EQ(ordinary.out, "755 s\n750 j\n640 o2\n1777 d\n755 e\n700 m\n");
  EXPECT_EQ(ordinary.err, "");
  for (const char* name : {"s", "i", "j", "o2", "d", "e", "m"})
    EXPECT_EQ(mode_of(s.ws / name) & 06000, 0U) << name;
}

TEST(Sandbox, NoFileCapabilityOrOwnerChangeLeavesTheSandbox) {
  PI_SANDBOX_REQUIRE(fs::exists("/usr/bin/python3"), "/usr/bin/python3 is not installed");
  Scratch s;
  // security.capability needs CAP_SETFCAP, which the command lacks; no other owner exists
  // inside (the user namespace maps the caller's uid and gid alone: EINVAL).
  // The value is a VFS_CAP_REVISION_2 record granting CAP_NET_RAW (capability.h).
  const RunResult r = s.run(
      "cp /usr/bin/id f && /usr/bin/python3 -c \"import os\n"
      "try:\n os.setxattr('f', 'security.capability', bytes.fromhex("
      "'01000002' '00200000' '00000000' '00000000' '00000000'))\n"
      "except OSError as e: print(e.strerror)\" && chown 65534 f; chgrp 65534 f");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "Operation not permitted\n");
  EXPECT_EQ(r.err,
            "chown: changing ownership of 'f': Invalid argument\n"
            "chgrp: changing group of 'f': Invalid argument\n");
  EXPECT_EQ(::getxattr((s.ws / "f").c_str(), "security.capability", nullptr, 0), -1);
  struct stat st {};
  ASSERT_EQ(::stat((s.ws / "f").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_gid, ::getegid());
}

TEST(Sandbox, AWriteToASetuidFileTheHostLeftInTheWorkspaceClearsItsBit) {
  Scratch s;
  // The host's own setuid program in the workspace (the command cannot make one): a write
  // through any of its names clears S_ISUID, the command lacking CAP_FSETID (inode(7)).
  fs::copy_file("/usr/bin/id", s.ws / "h");
  ASSERT_EQ(::chmod((s.ws / "h").c_str(), 04755), 0);
  fs::copy_file("/usr/bin/id", s.ws / "g");
  ASSERT_EQ(::chmod((s.ws / "g").c_str(), 06755), 0);
  const RunResult r = s.run("ln h h2 && printf x >> h2 && : > g && stat -c '%a %n' h g");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "755 h\n755 g\n");
  EXPECT_EQ(mode_of(s.ws / "h"), 0755U);
  EXPECT_EQ(mode_of(s.ws / "g"), 0755U);
}

TEST(Sandbox, AWorkspaceOfSlashIsRefused) {
  Scratch s;
  const RunResult r = run_process({sandbox_binary(), "run", "--cwd", "/", "-c", "true"}, s.env());
  EXPECT_EQ(r.exit_code, 125);
  EXPECT_EQ(r.err,
            "pi-sandbox: refusing the workspace \"/\": it would make the whole host "
            "writable\nhint: run pi-sandbox from a project directory (--cwd DIR)\n");
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

TEST(Concurrency, ASymlinkSwappedInByAnotherSandboxNeverRedirectsABind) {
  PI_SANDBOX_REQUIRE(fs::exists("/usr/bin/python3"), "/usr/bin/python3 is not installed");
  Scratch s;
  const fs::path victim = s.root / "victim";  // outside the workspace
  fs::create_directories(victim);
  ASSERT_EQ(s.run("git init -q 2>/dev/null || mkdir -p .git/hooks").exit_code, 0);
  // One sandboxed command keeps exchanging `sub` (a nested repository, so its parents get
  // bound) with `sub_alt` (a symlink to the victim) while others bind and write `sub`.
  write_file(s.ws / "swap.py", R"(
import ctypes, os, sys, time
os.makedirs("sub/.git/hooks", exist_ok=True)
os.symlink(sys.argv[1], "sub_alt")
libc = ctypes.CDLL(None, use_errno=True)
end = time.time() + float(sys.argv[2])
while time.time() < end:
    libc.syscall(316, -100, b"sub", -100, b"sub_alt", 2)  # renameat2(RENAME_EXCHANGE)
)");
  const pid_t swapper = spawn_process({sandbox_binary(), "run", "--cwd", s.ws.string(), "--",
                                       "/usr/bin/python3", "swap.py", victim.string(), "8"},
                                      s.env());
  for (int i = 0; i < 150; ++i) s.run("echo planted-" + std::to_string(i) + " > sub/planted");
  wait_process(swapper);
  EXPECT_EQ(list_dir(victim), std::vector<std::string>{});
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

TEST(Sandbox, HomeDotfilesAndConfigurationLinkedIntoTheWorkspaceStayProtected) {
  Scratch s;
  write_file(s.ws / "dots/bashrc", "rc\n");
  write_file(s.ws / "dots/gitconfig", "[user]\n");
  write_file(s.ws / "dots/pi-config.json", "{}");
  fs::remove(s.home / ".gitconfig");
  fs::create_symlink(s.ws / "dots/bashrc", s.home / ".bashrc");
  fs::create_symlink(s.ws / "dots/gitconfig", s.home / ".gitconfig");
  fs::create_symlink(s.ws / "dots/missing-profile", s.home / ".profile");
  fs::create_directories(s.home / ".pi/agent/extensions/pi-sandbox");
  fs::create_symlink(s.ws / "dots/pi-config.json",
                     s.home / ".pi/agent/extensions/pi-sandbox/config.json");
  const RunResult r = s.run(
      "echo evil >> dots/bashrc; echo evil >> dots/gitconfig; echo '{\"bad\":1}' > "
      "dots/pi-config.json; echo evil > dots/missing-profile; echo done");
  EXPECT_EQ(r.out, "done\n") << r.err;
  EXPECT_EQ(read_file(s.ws / "dots/bashrc"), "rc\n");
  EXPECT_EQ(read_file(s.ws / "dots/gitconfig"), "[user]\n");
  EXPECT_EQ(read_file(s.ws / "dots/pi-config.json"), "{}");
  EXPECT_FALSE(fs::is_regular_file(s.ws / "dots/missing-profile"));
  EXPECT_FALSE(fs::exists(s.ws / "dots/missing-profile"));  // the placeholder is gone too
}

}  // namespace
}  // namespace pisandbox::testing

namespace pisandbox::testing {
namespace {

TEST(Sandbox, AHookInANestedRepositoryCreatedByTheCommandIsQuarantined) {  // docs/cases.md, C-03
  PI_SANDBOX_REQUIRE(run_process({"/bin/sh", "-c", "command -v git"}).exit_code == 0,
                     "git is not installed");
  Scratch s;
  ASSERT_EQ(s.run("git init -q").exit_code, 0);
  const RunResult r =
      s.run("mkdir sub && git -C sub init -q && printf '#!/bin/sh\\n' > sub/.git/hooks/pre-commit");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string prefix = "pi-sandbox: moved " + (s.ws / "sub/.git/hooks/pre-commit").string() +
                             " to the quarantine (a Git hook in a repository the command "
                             "created: git on the host would run it); restore with: pi-sandbox "
                             "quarantine restore ";
  EXPECT_NE(r.err.find(prefix), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(s.ws / "sub/.git/hooks/pre-commit"));
}

}  // namespace
}  // namespace pisandbox::testing
