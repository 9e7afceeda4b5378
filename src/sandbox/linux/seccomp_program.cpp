// The seccomp programs of every sandbox, compiled by libseccomp at build time
// (seccomp_bpf_main.cpp), and their loading: libseccomp's compilation costs each command
// about a millisecond in its pid 1, for the same table every time.
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "sandbox/linux/seccomp.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

/// Written by pi-sandbox-seccomp-bpf from seccomp_rules(UnixSockets::Refused).
constexpr sock_filter kRefusedProgram[] = {
#include "sandbox/linux/seccomp_program_refused.inc"
};

/// Written by pi-sandbox-seccomp-bpf from seccomp_rules(UnixSockets::Brokered).
constexpr sock_filter kBrokeredProgram[] = {
#include "sandbox/linux/seccomp_program_brokered.inc"
};

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

constexpr unsigned long kListenerFlags =
    SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;

std::string probe_unix_broker() {
  std::uint32_t action = SECCOMP_RET_USER_NOTIF;
  if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0)
    return "seccomp user notification is unavailable (Linux 5.9 or later is needed)";
  // Known flags with no program: EFAULT from copying it; unknown flags: EINVAL first.
  errno = 0;
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, kListenerFlags, nullptr) == 0 ||
      errno != EFAULT)
    return "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV is unavailable (Linux 5.19 or later is "
           "needed)";
  errno = 0;
  if (::syscall(SYS_pidfd_getfd, -1, -1, 0) == 0 || errno == ENOSYS)
    return "pidfd_getfd(2) is unavailable (Linux 5.6 or later is needed)";
  return {};
}

}  // namespace

std::span<const sock_filter> precompiled_seccomp(UnixSockets unix) {
  if (unix == UnixSockets::Brokered) return kBrokeredProgram;
  return kRefusedProgram;
}

const std::string& unix_broker_unsupported() {
  static const std::string missing = probe_unix_broker();
  return missing;
}

core::Result<core::UniqueFd> load_seccomp(std::span<const sock_filter> program, Listener listener) {
  if (program.empty() || program.size() > USHRT_MAX)
    return core::fail("seccomp program of " + std::to_string(program.size()) + " instructions");
  sock_fprog fprog{static_cast<unsigned short>(program.size()),
                   const_cast<sock_filter*>(program.data())};
  // The flags libseccomp's seccomp_load() uses for these tables: none, and the listener's.
  const unsigned long flags = listener == Listener::Yes ? kListenerFlags : 0;
  const long rc = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fprog);
  if (rc < 0)
    return core::fail_errno(
        listener == Listener::Yes
            ? "seccomp(SECCOMP_SET_MODE_FILTER, NEW_LISTENER|WAIT_KILLABLE_RECV)"
            : "seccomp(SECCOMP_SET_MODE_FILTER)");
  return core::UniqueFd(listener == Listener::Yes ? static_cast<int>(rc) : -1);
}

core::Result<core::UniqueFd> apply_seccomp(const std::vector<SeccompRule>& rules) {
  const Listener listener = has_notify_rows(rules) ? Listener::Yes : Listener::No;
  for (const UnixSockets unix : {UnixSockets::Refused, UnixSockets::Brokered})
    if (rules == seccomp_rules(unix)) return load_seccomp(precompiled_seccomp(unix), listener);
  auto program = compile_seccomp(rules);
  if (!program) return std::unexpected(program.error());
  return load_seccomp(*program, listener);
}

}  // namespace pisandbox::sandbox::linux_
