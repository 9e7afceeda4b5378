#include "sandbox/linux/kernel_probe.hpp"

#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "core/error.hpp"
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

/// Tries unshare(CLONE_NEWUSER) in a throw-away child; returns 0 or the errno.
int try_user_namespace() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : (errno & 0xff));
  if (pid < 0) return errno;
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : EPERM;
}

KernelCheck user_namespaces() {
  KernelCheck check{"user namespaces", false, true, "", ""};
  const int err = try_user_namespace();
  check.ok = err == 0;
  check.detail = check.ok ? "unshare(CLONE_NEWUSER) works"
                          : "unshare(CLONE_NEWUSER): " + core::errno_name(err);
  if (check.ok) return check;
  std::string fix;
  if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0")
    fix += "sysctl -w kernel.unprivileged_userns_clone=1; ";
  if (read_sysctl("/proc/sys/user/max_user_namespaces") == "0")
    fix += "sysctl -w user.max_user_namespaces=15000; ";
  if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1")
    fix +=
        "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile "
        "for pi-sandbox with `userns,`); ";
  check.fix = fix.empty() ? "enable unprivileged user namespaces in the kernel configuration"
                          : fix.substr(0, fix.size() - 2);
  return check;
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

std::vector<KernelCheck> probe_kernel() {
  std::vector<KernelCheck> checks;
  utsname uts{};
  ::uname(&uts);
  checks.push_back({"kernel", true, false, std::string(uts.sysname) + " " + uts.release, ""});
  checks.push_back(user_namespaces());
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
