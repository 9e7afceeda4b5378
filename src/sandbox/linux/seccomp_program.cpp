// The seccomp program of every sandbox, compiled by libseccomp at build time
// (seccomp_bpf_main.cpp), and its loading: libseccomp's compilation costs each command
// about a millisecond in its pid 1, for the same table every time.
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

#include "sandbox/linux/seccomp.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

/// Written by pi-sandbox-seccomp-bpf from seccomp_rules() for the native architecture.
constexpr sock_filter kProgram[] = {
#include "sandbox/linux/seccomp_program.inc"
};

}  // namespace

std::span<const sock_filter> precompiled_seccomp() {
  return kProgram;
}

core::Result<void> load_seccomp(std::span<const sock_filter> program) {
  if (program.empty() || program.size() > USHRT_MAX)
    return core::fail("seccomp program of " + std::to_string(program.size()) + " instructions");
  sock_fprog fprog{static_cast<unsigned short>(program.size()),
                   const_cast<sock_filter*>(program.data())};
  // The flags libseccomp's seccomp_load() uses for this table: none.
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0)
    return core::fail_errno("seccomp(SECCOMP_SET_MODE_FILTER)");
  return {};
}

core::Result<void> apply_seccomp(const std::vector<SeccompRule>& rules) {
  if (rules == seccomp_rules()) return load_seccomp(precompiled_seccomp());
  auto program = compile_seccomp(rules);
  if (!program) return std::unexpected(program.error());
  return load_seccomp(*program);
}

}  // namespace pisandbox::sandbox::linux_
