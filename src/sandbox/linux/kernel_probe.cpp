#include "sandbox/linux/kernel_probe.hpp"

#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "sandbox/linux/host_diagnosis.hpp"
#include "sandbox/linux/landlock.hpp"
#include "sandbox/linux/seccomp.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

std::string read_sysctl(const std::string& path) {
  std::ifstream in(path);
  std::string value;
  if (!(in >> value)) return {};
  return value;
}

/// The whole text of a small file such as /proc/1/cgroup; "" when it cannot be read.
std::string read_text(const std::string& path, bool* readable = nullptr) {
  std::ifstream in(path);
  if (readable != nullptr) *readable = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  if (readable != nullptr) *readable = *readable && !in.bad();
  return text.str();
}

/// The `Seccomp:` field of /proc/self/status (proc(5)); 0 when absent.
int seccomp_mode() {
  std::istringstream status(read_text("/proc/self/status"));
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Seccomp:")) return std::atoi(line.c_str() + 8);
  return 0;
}

/// The signs that this process runs in a container, as shown to the user.
std::vector<std::string> container_signs() {
  std::vector<std::string> signs;
  std::error_code error;
  for (const char* marker : {"/.dockerenv", "/run/.containerenv"})
    if (std::filesystem::exists(marker, error)) signs.emplace_back(marker);
  if (auto runtime = container_runtime_in_cgroup(read_text("/proc/1/cgroup")); !runtime.empty())
    signs.push_back("/proc/1/cgroup names " + runtime);
  return signs;
}

/// Tries unshare(CLONE_NEWUSER) in a throw-away child; returns 0 or the errno.
int try_user_namespace() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
  if (pid < 0) return errno;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
}

KernelCheck syscall_present(const std::string& name, long nr, const std::string& needs) {
  // Invalid arguments: EBADF/EINVAL/EFAULT mean "present", ENOSYS means "missing".
  errno = 0;
  ::syscall(nr, -1, nullptr, 0, nullptr, 0);
  const bool ok = errno != ENOSYS;
  return {name, ok, true, ok ? "present" : "ENOSYS", ok ? "" : needs};
}

KernelCheck landlock() {
  const int abi = landlock_abi_version();
  KernelCheck check{"Landlock", abi > 0, false, "", ""};
  check.detail = abi > 0 ? "ABI " + std::to_string(abi) +
                               (abi >= 6 ? " (signals and abstract sockets scoped)" : "")
                         : "unavailable: the namespaces and seccomp still confine commands";
  if (abi == 0)
    check.fix =
        "boot Linux 5.13+ with CONFIG_SECURITY_LANDLOCK=y and `landlock` in the lsm= "
        "list (e.g. lsm=landlock,lockdown,yama,apparmor)";
  return check;
}

KernelCheck seccomp() {
  const int mode = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
  const bool ok = mode >= 0 && !read_sysctl("/proc/sys/kernel/seccomp/actions_avail").empty();
  return {"seccomp filters", ok, true,
          ok ? "available" : "prctl(PR_GET_SECCOMP): " + core::errno_name(errno),
          ok ? "" : "boot a kernel with CONFIG_SECCOMP_FILTER=y"};
}

KernelCheck unix_broker() {
  const std::string& missing = unix_broker_unsupported();
  KernelCheck check{"Unix socket broker", missing.empty(), false, "", ""};
  check.detail = missing.empty()
                     ? "seccomp user notification with descriptor injection: the sandbox's own "
                       "Unix sockets work, host sockets are decided (hostIPC.allowedSockets, "
                       "approvals)"
                     : missing + "; socket(AF_UNIX) is refused inside (EPERM)";
  if (!missing.empty()) check.fix = "boot Linux 5.19 or later for Unix sockets inside the sandbox";
  return check;
}

}  // namespace

HostFacts probe_host_facts() {
  HostFacts facts;
  facts.unshare_errno = try_user_namespace();
  facts.max_user_namespaces = read_sysctl("/proc/sys/user/max_user_namespaces");
  facts.unprivileged_userns_clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
  facts.apparmor_restrict = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  facts.apparmor_profiles =
      read_text("/sys/kernel/security/apparmor/profiles", &facts.apparmor_profiles_readable);
  facts.seccomp_mode = seccomp_mode();
  facts.container = container_signs();
  facts.pid1_systemd = read_sysctl("/proc/1/comm") == "systemd";
  facts.euid = ::geteuid();
  return facts;
}

std::vector<KernelCheck> probe_kernel(const HostFacts& facts) {
  std::vector<KernelCheck> checks;
  utsname uts{};
  ::uname(&uts);
  checks.push_back({"kernel", true, false, std::string(uts.sysname) + " " + uts.release, ""});
  checks.push_back(diagnose_user_namespaces(facts));
  for (auto& apparmor : diagnose_apparmor(facts)) checks.push_back(std::move(apparmor));
  checks.push_back(
      syscall_present("clone3 and pidfd", SYS_pidfd_send_signal, "Linux 5.3 or later is needed"));
  checks.push_back(syscall_present("new mount API (mount_setattr)", SYS_mount_setattr,
                                   "Linux 5.12 or later is needed"));
  checks.push_back(landlock());
  checks.push_back(seccomp());
  checks.push_back(unix_broker());
  return checks;
}

}  // namespace pisandbox::sandbox::linux_
