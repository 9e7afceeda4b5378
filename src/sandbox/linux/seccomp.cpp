#include "sandbox/linux/seccomp.hpp"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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
  return {std::move(name), {}, error, std::move(why)};
}

SeccompRule refuse_if(std::string name, std::vector<ArgCondition> conditions, std::string why) {
  return {std::move(name), std::move(conditions), EPERM, std::move(why)};
}

SeccompRule notify(std::string name, std::string why) {
  return {std::move(name), {}, 0, std::move(why), SeccompAction::Notify};
}

/// The type argument of socket(2) and socketpair(2) without SOCK_NONBLOCK and SOCK_CLOEXEC.
constexpr std::uint64_t kSocketType = 0xf;

// fchmodat2 (Linux 6.6) is unknown by name to libseccomp releases before 2.5.5, still in
// distributions: its row must not vanish with them, so it is added by number when the name
// does not resolve (the unified number of new syscalls, include/uapi/asm-generic/unistd.h and
// arch/x86/entry/syscalls/syscall_64.tbl).
#ifdef __NR_fchmodat2
constexpr int kFchmodat2 = __NR_fchmodat2;
#elif defined(__x86_64__) || defined(__aarch64__) || defined(__riscv) || defined(__loongarch__)
constexpr int kFchmodat2 = 452;
#else
#error "the number of fchmodat2 on this architecture is needed for its seccomp row"
#endif

/// The syscall number of `name` for the native architecture, or __NR_SCMP_ERROR when it has
/// none there (open, chmod and mknod exist on x86_64, not on aarch64).
int syscall_number(const std::string& name) {
  const int nr = seccomp_syscall_resolve_name(name.c_str());
  if (nr == __NR_SCMP_ERROR && name == "fchmodat2") return kFchmodat2;
  return nr;
}

/// The mode bits that make a program run with its file's owner or group (inode(7)): the
/// workspace's mount on the host honours them, the sandbox's nosuid mount does not.
constexpr std::uint64_t kPrivilegeBits[] = {S_ISUID, S_ISGID};

/// The flags of open(2) that create a file with the mode argument: O_CREAT, and O_TMPFILE
/// (whose O_DIRECTORY part alone creates nothing).
constexpr std::uint64_t kCreatingFlags[] = {O_CREAT, O_TMPFILE & ~O_DIRECTORY};

/// Rows that refuse (EPERM) a setuid or setgid bit on any file the command changes or creates
/// (docs/security.md, "Privilege bits"): the mode argument is a number, so seccomp reads it
/// (one row per bit: a row's conditions compare one value). A directory's mode is refused
/// alike (the filter cannot tell a directory), and mkdir(2) needs no row: the kernel ignores
/// those bits in its mode, a new directory only inherits S_ISGID from its parent.
void refuse_privilege_bits(std::vector<SeccompRule>& rules) {
  const std::string why = "no setuid or setgid bit: the host's mount of the workspace honours it";
  struct ModeArgument {
    const char* syscall;
    unsigned index;
  };
  // chmod(path, mode), fchmod(fd, mode), creat(path, mode), mknod(path, mode, dev);
  // fchmodat(dirfd, path, mode), fchmodat2(dirfd, path, mode, flags), mknodat(dirfd, path,
  // mode, dev).
  for (const auto [syscall, index] :
       {ModeArgument{"chmod", 1}, ModeArgument{"fchmod", 1}, ModeArgument{"fchmodat", 2},
        ModeArgument{"fchmodat2", 2}, ModeArgument{"creat", 1}, ModeArgument{"mknod", 1},
        ModeArgument{"mknodat", 2}})
    for (const std::uint64_t bit : kPrivilegeBits)
      rules.push_back(refuse_if(syscall, {{index, bit, bit}}, why));
  // open(path, flags, mode), openat(dirfd, path, flags, mode): the mode counts only when the
  // call creates a file.
  for (const std::uint64_t flag : kCreatingFlags)
    for (const std::uint64_t bit : kPrivilegeBits) {
      rules.push_back(refuse_if("open", {{1, flag, flag}, {2, bit, bit}}, why));
      rules.push_back(refuse_if("openat", {{2, flag, flag}, {3, bit, bit}}, why));
    }
  // openat2 passes flags and mode in a struct open_how that seccomp cannot read. Its callers
  // already handle ENOSYS (kernels before 5.6 lack it) by calling openat, which the rows above
  // filter; nothing of pi-sandbox calls it after the filter is loaded.
  const std::string unreadable =
      "flags and mode unreadable by seccomp; callers fall back to openat";
  rules.push_back(refuse("openat2", unreadable, ENOSYS));
}

std::vector<SeccompRule> build_rules(UnixSockets unix) {
  std::vector<SeccompRule> rules;
  if (unix == UnixSockets::Refused) {
    // Host IPC: a Unix socket is how tmux, ssh-agent, docker are reached (compatibility C29,
    // C59).
    rules.push_back(
        refuse_if("socket", {{0, kLow32, AF_UNIX}}, "no Unix sockets (host IPC needs approval)"));
  } else {
    // SOCK_RAW too: on AF_UNIX the kernel makes it a datagram socket (unix_create()).
    for (const int type : {SOCK_DGRAM, SOCK_RAW})
      rules.push_back(refuse_if("socket",
                                {{0, kLow32, AF_UNIX}, {1, kSocketType, std::uint64_t(type)}},
                                "no Unix datagram sockets (a datagram names its destination in "
                                "sendmsg(), which no filter can read)"));
    // Every bind and connect, whatever the family (the filter cannot see a descriptor's): the
    // supervisor makes the call on its own copy of the socket and the address, so nothing the
    // command changes afterwards reaches the kernel (docs/security.md, "Unix sockets").
    rules.push_back(notify("connect", "brokered: a host socket needs a decision"));
    rules.push_back(notify("bind", "brokered: the sockets the sandbox binds are its own"));
  }
  // An anonymous pair reaches nothing, but a datagram socket of it can still be given any
  // destination by sendto() (compatibility C29).
  for (const int type : {SOCK_DGRAM, SOCK_RAW})
    rules.push_back(refuse_if("socketpair",
                              {{0, kLow32, AF_UNIX}, {1, kSocketType, std::uint64_t(type)}},
                              "no Unix datagram pairs (sendto() could name a host socket)"));
  rules.push_back(refuse_if("socket", {{0, kLow32, AF_VSOCK}}, "no VSOCK (host services of a VM)"));
  // Namespaces and mounts could undo the mount plan (compatibility C30).
  rules.push_back(refuse_if("clone", {{0, CLONE_NEWUSER, CLONE_NEWUSER}}, "no new user namespace"));
  rules.push_back(refuse_if("clone", {{0, CLONE_NEWNS, CLONE_NEWNS}}, "no new mount namespace"));
  rules.push_back(
      refuse_if("unshare", {{0, CLONE_NEWUSER, CLONE_NEWUSER}}, "no new user namespace"));
  rules.push_back(refuse_if("unshare", {{0, CLONE_NEWNS, CLONE_NEWNS}}, "no new mount namespace"));
  // clone3 passes its flags in memory that seccomp cannot read: ENOSYS makes libc fall
  // back to clone, which the rows above filter (compatibility C30).
  rules.push_back(
      refuse("clone3", "flags unreadable by seccomp; libc falls back to clone", ENOSYS));
  for (const char* name : {"mount", "umount2", "pivot_root", "setns", "open_tree", "move_mount",
                           "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"})
    rules.push_back(refuse(name, "no mount changes"));
  for (const char* name : {"io_uring_setup", "io_uring_enter", "io_uring_register"})
    rules.push_back(refuse(name, "io_uring bypasses syscall filtering (compatibility C29)"));
  rules.push_back(
      refuse_if("ioctl", {{1, kLow32, TIOCSTI}}, "no typing into the terminal (TIOCSTI)"));
  rules.push_back(
      refuse_if("ioctl", {{1, kLow32, TIOCLINUX}}, "no console selection/paste (TIOCLINUX)"));
  for (const char* name : {"keyctl", "add_key", "request_key"})
    rules.push_back(refuse(name, "the kernel keyring is shared with the host user"));
  rules.push_back(refuse("bpf", "no BPF programs"));
  rules.push_back(refuse("perf_event_open", "no performance monitoring of the host"));
  rules.push_back(refuse("userfaultfd", "a common kernel-exploit primitive"));
  refuse_privilege_bits(rules);
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

const std::vector<SeccompRule>& seccomp_rules(UnixSockets unix) {
  static const std::vector<SeccompRule> refused = build_rules(UnixSockets::Refused);
  static const std::vector<SeccompRule> brokered = build_rules(UnixSockets::Brokered);
  return unix == UnixSockets::Refused ? refused : brokered;
}

bool has_notify_rows(const std::vector<SeccompRule>& rules) {
  return std::ranges::any_of(
      rules, [](const SeccompRule& rule) { return rule.action == SeccompAction::Notify; });
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
    const int nr = syscall_number(rule.syscall);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
    const std::string call = "seccomp_rule_add(" + rule.syscall + ")";
    std::vector<scmp_arg_cmp> comparisons;
    for (const auto& c : rule.conditions)
      comparisons.push_back(SCMP_CMP(c.index, SCMP_CMP_MASKED_EQ, c.mask, c.value));
    const std::uint32_t action =
        rule.action == SeccompAction::Notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(rule.error);
    const int rc =
        seccomp_rule_add_array(ctx.get(), action, nr, static_cast<unsigned>(comparisons.size()),
                               comparisons.empty() ? nullptr : comparisons.data());
    if (auto r = check(rc, call); !r) return std::unexpected(r.error());
  }
  return export_program(ctx.get());
}

}  // namespace pisandbox::sandbox::linux_
