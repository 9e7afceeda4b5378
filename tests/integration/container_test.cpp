// `pi-sandbox doctor` and `run` under a seccomp filter like the default profiles of Docker and
// Podman (docs/containers.md): unshare and clone with CLONE_NEWUSER fail with EPERM, clone3
// with ENOSYS (their profiles answer clone3 so, without CAP_SYS_ADMIN, for libc to fall back to
// clone). The filter is installed in a child of the test, around pi-sandbox only.
#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

/// Installs the filter in this process: EPERM for unshare and clone with CLONE_NEWUSER,
/// ENOSYS for clone3 (moby's profiles/seccomp/default.json). Returns false on failure.
bool install_docker_like_filter() {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return false;
  const bool ok =
      ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) == 0 &&
      ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)) == 0 &&
      ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) == 0 &&
      ::seccomp_load(ctx) == 0;
  ::seccomp_release(ctx);
  return ok;
}

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

/// Runs `argv` as run_process does, from a child of this process that installed the filter
/// first. The child sends back "<exit code>\n<stdout length>\n<stdout><stderr>".
RunResult run_under_docker_like_filter(const std::vector<std::string>& argv,
                                       const std::map<std::string, std::string>& env) {
  int channel[2];
  if (::pipe(channel) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(channel[0]);
    if (!install_docker_like_filter()) ::_exit(126);
    const RunResult inner = run_process(argv, env);
    write_all(channel[1], std::to_string(inner.exit_code) + "\n" +
                              std::to_string(inner.out.size()) + "\n" + inner.out + inner.err);
    ::_exit(0);
  }
  ::close(channel[1]);
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(channel[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  ::close(channel[0]);
  RunResult result;
  if (wait_process(pid) != 0) return result;
  const auto first = text.find('\n'), second = text.find('\n', first + 1);
  result.exit_code = std::stoi(text.substr(0, first));
  const auto out_size = std::stoul(text.substr(first + 1, second - first - 1));
  result.out = text.substr(second + 1, out_size);
  result.err = text.substr(second + 1 + out_size);
  return result;
}

/// What doctor says of the container around it: this test's machine may be one itself.
std::string container_cause() {
  std::vector<std::string> signs;
  for (const char* marker : {"/.dockerenv", "/run/.containerenv"})
    if (std::filesystem::exists(marker)) signs.emplace_back(marker);
  const std::string cgroup = read_file("/proc/1/cgroup");
  for (const char* word : {"docker", "kubepods", "containerd", "libpod"})
    if (cgroup.find(word) != std::string::npos) {
      signs.push_back(std::string("/proc/1/cgroup names ") + word);
      break;
    }
  if (signs.empty())
    return "a seccomp filter around pi-sandbox (Seccomp: 2 in /proc/self/status) refuses it, "
           "as Docker's and Podman's do";
  std::string list;
  for (const auto& sign : signs) list += (list.empty() ? "" : ", ") + sign;
  return "inside a container (" + list + ") whose seccomp profile refuses new user namespaces";
}

constexpr const char* kContainerFix =
    "for the full sandbox, start the container with\n"
    "                Docker, Podman: --security-opt seccomp=unconfined --security-opt "
    "systempaths=unconfined\n"
    "                  (or a seccomp profile that adds unshare, clone, clone3, mount, umount2, "
    "pivot_root,\n"
    "                  open_tree, move_mount, mount_setattr and the landlock_* calls; and\n"
    "                  --security-opt apparmor=unconfined where the host runs AppArmor)\n"
    "                Kubernetes: securityContext: {seccompProfile: {type: Unconfined}, "
    "procMount: Unmasked,\n"
    "                  appArmorProfile: {type: Unconfined}} (procMount: Unmasked needs "
    "hostUsers: false)\n"
    "              meanwhile pi-sandbox runs in its weaker mode (docs/containers.md)\n";

TEST(Containers, DoctorNamesTheSeccompProfileAndTheFlagsThatGiveTheFullSandbox) {
  const Scratch s;
  const RunResult doctor = run_under_docker_like_filter({sandbox_binary(), "doctor"}, s.env());
  ASSERT_NE(doctor.exit_code, -1) << "the filter could not be installed";
  EXPECT_TRUE(doctor.out.contains("MISSING  user namespaces: unshare(CLONE_NEWUSER): EPERM; " +
                                  container_cause() + "\n         fix: " + kContainerFix))
      << doctor.out;
  // Meanwhile the weaker sandbox runs the trial command (docs/security.md, "Where namespaces
  // cannot be made"), and doctor says so.
  EXPECT_TRUE(
      doctor.out.contains("\nweaker   the weaker sandbox (where namespaces cannot be "
                          "made): runs every command meanwhile ("))
      << doctor.out;
  EXPECT_TRUE(doctor.out.contains("\nok       a sandboxed /bin/true: works (weaker sandbox, "))
      << doctor.out;
  EXPECT_TRUE(
      doctor.out.ends_with("pi-sandbox runs commands here in the weaker sandbox until the "
                           "MISSING items are fixed.\n"))
      << doctor.out;
  EXPECT_EQ(doctor.exit_code, 1);
  EXPECT_FALSE(doctor.out.contains("see the MISSING items above")) << doctor.out;
  EXPECT_FALSE(doctor.out.contains("enable unprivileged user namespaces")) << doctor.out;
}

/// Whether doctor sees a container around it (then a sysctl is set on the host or node).
bool in_container() {
  return !container_cause().starts_with("a seccomp filter");
}

TEST(Containers, DoctorNamesUserMaxUserNamespacesAtZero) {
  // A child user namespace whose own limit is 0 (user_namespaces(7): the limits are per user
  // namespace), as on a node with user.max_user_namespaces=0.
  const Scratch s;
  const RunResult doctor = run_process(
      {"/usr/bin/unshare", "-Ur", "/bin/sh", "-c",
       "echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" doctor", sandbox_binary()},
      s.env());
  PI_SANDBOX_REQUIRE(!doctor.err.contains("unshare failed"),
                     "unshare -Ur (util-linux) cannot make a user namespace here: " << doctor.err);
  EXPECT_EQ(doctor.exit_code, 1) << doctor.err;
  EXPECT_TRUE(doctor.out.contains(
      std::string("MISSING  user namespaces: unshare(CLONE_NEWUSER): ENOSPC; "
                  "user.max_user_namespaces is 0\n"
                  "         fix: ") +
      (in_container() ? "as root on the host or node (not here): " : "as root: ") +
      "sysctl -w user.max_user_namespaces=15000 (and a file in /etc/sysctl.d to keep it); "
      "meanwhile pi-sandbox runs in its weaker mode (docs/containers.md)\n"))
      << doctor.out;
}

TEST(Containers, UnderTheFilterACommandRunsInTheWeakerSandbox) {
  // Docker's default profile (clone3 ENOSYS, unshare EPERM): the full sandbox cannot be made,
  // Landlock can; the command runs there, said in one line, and no refusal is printed.
  const Scratch s;
  const RunResult run = run_under_docker_like_filter(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "/bin/sh", "-c", "echo ran"},
      s.env());
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "ran\n");
  EXPECT_TRUE(
      run.err.contains("pi-sandbox: weaker sandbox, user namespaces cannot be made here: "
                       "Landlock, seccomp and the proxy confine this command"))
      << run.err;
  EXPECT_FALSE(run.err.contains("clone3")) << run.err;
}

}  // namespace
}  // namespace pisandbox::testing
