#include "sandbox/linux/seccomp.hpp"

#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

constexpr std::uint64_t kLow32 = 0xffffffffULL;
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

SeccompRule refuse(std::string name, std::string why, int error = EPERM) {
  return {std::move(name), std::nullopt, error, std::move(why)};
}

SeccompRule refuse_if(std::string name, ArgCondition condition, std::string why) {
  return {std::move(name), condition, EPERM, std::move(why)};
}

std::vector<SeccompRule> build_rules() {
  std::vector<SeccompRule> rules = {
      // Host IPC: a Unix socket is how tmux, ssh-agent, docker are reached (compatibility C29,
      // C59).
      refuse_if("socket", {0, kLow32, AF_UNIX}, "no Unix sockets (host IPC needs approval)"),
      refuse_if("socket", {0, kLow32, AF_VSOCK}, "no VSOCK (host services of a VM)"),
      // Namespaces and mounts could undo the mount plan (compatibility C30).
      refuse_if("clone", {0, CLONE_NEWUSER, CLONE_NEWUSER}, "no new user namespace"),
      refuse_if("clone", {0, CLONE_NEWNS, CLONE_NEWNS}, "no new mount namespace"),
      refuse_if("unshare", {0, CLONE_NEWUSER, CLONE_NEWUSER}, "no new user namespace"),
      refuse_if("unshare", {0, CLONE_NEWNS, CLONE_NEWNS}, "no new mount namespace"),
      // clone3 passes its flags in memory that seccomp cannot read: ENOSYS makes libc fall
      // back to clone, which the rows above filter (compatibility C30).
      refuse("clone3", "flags unreadable by seccomp; libc falls back to clone", ENOSYS),
  };
  for (const char* name : {"mount", "umount2", "pivot_root", "setns", "open_tree", "move_mount",
                           "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"})
    rules.push_back(refuse(name, "no mount changes"));
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"})
    rules.push_back(refuse(name, "io_uring bypasses syscall filtering (item 144)"));
  rules.push_back(
      refuse_if("ioctl", {1, kLow32, TIOCSTI}, "no typing into the terminal (TIOCSTI)"));
  rules.push_back(
      refuse_if("ioctl", {1, kLow32, TIOCLINUX}, "no console selection/paste (TIOCLINUX)"));
  for (const char* name : {"keyctl", "add_key", "request_key"})
    rules.push_back(refuse(name, "the kernel keyring is shared with the host user"));
  rules.push_back(refuse("bpf", "no BPF programs"));
  rules.push_back(refuse("perf_event_open", "no performance monitoring of the host"));
  rules.push_back(refuse("userfaultfd", "a common kernel-exploit primitive"));
  return rules;
}

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};

core::Result<void> check(int rc, const std::string& call) {
  if (rc == 0) return {};
  return std::unexpected(core::sys_error(call, -rc));
}

/// The BPF program of `ctx`, read back from a memfd (libseccomp 2.5 exports to a descriptor
/// only).
core::Result<std::vector<sock_filter>> export_program(void* ctx) {
  core::UniqueFd file(::memfd_create("seccomp-bpf", MFD_CLOEXEC));
  if (!file) return core::fail_errno("memfd_create(\"seccomp-bpf\")");
  if (auto r = check(seccomp_export_bpf(ctx, file.get()), "seccomp_export_bpf()"); !r)
    return std::unexpected(r.error());
  const off_t size = ::lseek(file.get(), 0, SEEK_CUR);
  if (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0)
    return core::fail("seccomp_export_bpf() wrote " + std::to_string(size) + " bytes");
  std::vector<sock_filter> program(static_cast<std::size_t>(size) / sizeof(sock_filter));
  if (::pread(file.get(), program.data(), static_cast<std::size_t>(size), 0) != size)
    return core::fail_errno("pread(the exported seccomp program)");
  return program;
}

}  // namespace

const std::vector<SeccompRule>& seccomp_rules() {
  static const std::vector<SeccompRule> rules = build_rules();
  return rules;
}

core::Result<std::vector<sock_filter>> compile_seccomp(const std::vector<SeccompRule>& rules) {
  std::unique_ptr<void, FilterDeleter> ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return core::fail("seccomp_init(SCMP_ACT_ALLOW) failed");
  // Syscalls of another architecture (i386 via int 0x80) or of the x32 ABI kill.
  if (auto r = check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS),
                     "seccomp_attr_set(SCMP_FLTATR_ACT_BADARCH)");
      !r)
    return std::unexpected(r.error());
  for (const auto& rule : rules) {
    const int nr = seccomp_syscall_resolve_name(rule.syscall.c_str());
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    const std::string call = "seccomp_rule_add(" + rule.syscall + ")";
    int rc = 0;
    if (rule.condition) {
      const auto& c = *rule.condition;
      rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(rule.error), nr, 1,
                            SCMP_CMP(c.index, SCMP_CMP_MASKED_EQ, c.mask, c.value));
    } else {
      rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(rule.error), nr, 0);
    }
    if (auto r = check(rc, call); !r) return std::unexpected(r.error());
  }
  return export_program(ctx.get());
}

}  // namespace pisandbox::sandbox::linux_
