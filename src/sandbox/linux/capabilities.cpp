#include "sandbox/linux/capabilities.hpp"

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>

namespace pisandbox::sandbox::linux_ {

namespace {

int last_capability() {
  std::ifstream in("/proc/sys/kernel/cap_last_cap");
  int last = CAP_LAST_CAP;
  in >> last;
  return last;
}

}  // namespace

core::Result<void> drop_capabilities() {
  // A process that holds no capability (an unprivileged user outside any user namespace: the
  // weaker sandbox, landlock_only.hpp) has nothing to drop and may not change its securebits or
  // bounding set; under no_new_privs no execve(2) gives it any (capabilities(7)).
  __user_cap_header_struct query{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct held[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &query, held) == 0 && ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 &&
      held[0].permitted == 0 && held[1].permitted == 0 && held[0].inheritable == 0 &&
      held[1].inheritable == 0)
    return {};
  constexpr unsigned long kBits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
  if (::prctl(PR_SET_SECUREBITS, kBits, 0, 0, 0) != 0)
    return core::fail_errno("prctl(PR_SET_SECUREBITS)");
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
    return core::fail_errno("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  const int last = last_capability();
  for (int cap = 0; cap <= last; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return core::fail_errno("prctl(PR_CAPBSET_DROP, " + std::to_string(cap) + ")");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return core::fail_errno("capset(all empty)");
  return {};
}

}  // namespace pisandbox::sandbox::linux_
