// pisandbox::sandbox::linux_ — the seccomp filter, installed last (docs/security.md,
// "Layers, in the order they are applied").
//
// Kernel document: Documentation/userspace-api/seccomp_filter.rst; compiled with libseccomp.
// The rule table is a plain value (pure) so that `pi-sandbox policy` can print it and unit
// tests can compare it whole; compile_seccomp() turns it into BPF. The table of every sandbox
// is compiled once, at build time (seccomp_bpf_main.cpp writes the program into the binary),
// so that no command pays libseccomp's compilation; a unit test compares that program with
// what libseccomp makes at run time, so the two cannot drift. Sources: compatibility C29-C30
// and docs/security.md, "Layers, in the order they are applied".
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::sandbox::linux_ {

/// What the filter does with a matching syscall.
enum class SeccompAction {
  Errno,   ///< fail with `error` (EPERM, ENOSYS)
  Notify,  ///< stop the caller and ask the supervisor (SECCOMP_RET_USER_NOTIF), which makes the
           ///< call itself on its own copy of the arguments (unix_broker.hpp); `error` unused
};

/// How a sandbox treats Unix-domain sockets (docs/security.md, "Unix sockets").
enum class UnixSockets {
  Refused,   ///< socket(AF_UNIX) fails with EPERM: kernels without seccomp user notification
             ///< with descriptor injection, and the broker's own helper
  Brokered,  ///< socket(AF_UNIX) works; every bind() and connect() goes to the supervisor
};

/// A condition on one argument: `(arg[index] & mask) == value` (32-bit masks compare the low
/// half, as the kernel does for int arguments).
struct ArgCondition {
  unsigned index;
  std::uint64_t mask;
  std::uint64_t value;

  friend bool operator==(const ArgCondition&, const ArgCondition&) = default;
};

/// One row: `syscall` (libseccomp name), the argument conditions that must all hold (none:
/// every call), the errno to return and why the row exists, and what the filter does.
struct SeccompRule {
  std::string syscall;
  std::vector<ArgCondition> conditions;
  int error;
  std::string why;
  SeccompAction action = SeccompAction::Errno;

  friend bool operator==(const SeccompRule&, const SeccompRule&) = default;
};

/// The rule table of every sandbox (pure) for `unix`. Everything not listed is allowed;
/// syscalls of a foreign architecture (i386 `int 0x80`) and the x32 ABI kill the process.
/// Unix datagram sockets are refused in both (a datagram can name any socket file as its
/// destination in sendmsg(), which the filter cannot read), and so is a setuid or setgid bit
/// in the mode of every call that sets or creates one (chmod, open with O_CREAT, mknod, ...;
/// openat2, whose mode it cannot read: ENOSYS): docs/security.md, "Privilege bits".
const std::vector<SeccompRule>& seccomp_rules(UnixSockets unix = UnixSockets::Refused);

/// Whether `rules` has a Notify row (its filter is loaded with a listener).
[[nodiscard]] bool has_notify_rows(const std::vector<SeccompRule>& rules);

/// Compiles `rules` with libseccomp for the native architecture (seccomp_export_bpf): the
/// BPF program, one sock_filter per instruction. Errors name the libseccomp call and the
/// syscall of the row.
core::Result<std::vector<sock_filter>> compile_seccomp(const std::vector<SeccompRule>& rules);

/// compile_seccomp(seccomp_rules(unix)) as the build compiled it (seccomp_program_*.inc).
std::span<const sock_filter> precompiled_seccomp(UnixSockets unix = UnixSockets::Refused);

/// Whether this kernel can broker Unix sockets (UnixSockets::Brokered): seccomp user
/// notification with descriptor injection (SECCOMP_RET_USER_NOTIF, SECCOMP_IOCTL_NOTIF_ADDFD,
/// Linux 5.9), SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (5.19) and pidfd_getfd(2) (5.6). Empty
/// when it can, else what is missing (for `doctor` and `policy`). Probed once per process.
[[nodiscard]] const std::string& unix_broker_unsupported();

/// Loads `program` for the calling thread and its future children
/// (seccomp(SECCOMP_SET_MODE_FILTER)). Requires PR_SET_NO_NEW_PRIVS. With `listener`, the
/// filter gets a notification listener (SECCOMP_FILTER_FLAG_NEW_LISTENER, with
/// WAIT_KILLABLE_RECV so that a signal cannot restart a call the supervisor is making) and
/// its descriptor is returned; otherwise the result holds no descriptor.
enum class Listener { No, Yes };
core::Result<core::UniqueFd> load_seccomp(std::span<const sock_filter> program,
                                          Listener listener = Listener::No);

/// Loads the filter of `rules`: the precompiled program when they are one of the
/// seccomp_rules() tables, else compiled now; with a listener when they have Notify rows.
/// Requires PR_SET_NO_NEW_PRIVS.
core::Result<core::UniqueFd> apply_seccomp(const std::vector<SeccompRule>& rules);

}  // namespace pisandbox::sandbox::linux_
