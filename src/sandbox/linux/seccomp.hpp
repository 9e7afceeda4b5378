// pisandbox::sandbox::linux_ — the seccomp filter, installed last (STYLE.md habit 3).
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

namespace pisandbox::sandbox::linux_ {

/// What the filter does with a matching syscall.
enum class SeccompAction {
  Errno,  ///< fail with `error` (EPERM, ENOSYS)
};

/// A condition on one argument: `(arg[index] & mask) == value` (32-bit masks compare the low
/// half, as the kernel does for int arguments).
struct ArgCondition {
  unsigned index;
  std::uint64_t mask;
  std::uint64_t value;

  friend bool operator==(const ArgCondition&, const ArgCondition&) = default;
};

/// One row: `syscall` (libseccomp name), an optional argument condition, the errno to return
/// and why the row exists.
struct SeccompRule {
  std::string syscall;
  std::optional<ArgCondition> condition;
  int error;
  std::string why;

  friend bool operator==(const SeccompRule&, const SeccompRule&) = default;
};

/// The rule table of every sandbox (pure). Everything not listed is allowed; syscalls of a
/// foreign architecture (i386 `int 0x80`) and the x32 ABI kill the process.
const std::vector<SeccompRule>& seccomp_rules();

/// Compiles `rules` with libseccomp for the native architecture (seccomp_export_bpf): the
/// BPF program, one sock_filter per instruction. Errors name the libseccomp call and the
/// syscall of the row.
core::Result<std::vector<sock_filter>> compile_seccomp(const std::vector<SeccompRule>& rules);

/// compile_seccomp(seccomp_rules()) as the build compiled it (seccomp_program.inc).
std::span<const sock_filter> precompiled_seccomp();

/// Loads `program` for the calling thread and its future children
/// (seccomp(SECCOMP_SET_MODE_FILTER)). Requires PR_SET_NO_NEW_PRIVS.
core::Result<void> load_seccomp(std::span<const sock_filter> program);

/// Loads the filter of `rules`: the precompiled program when they are seccomp_rules(),
/// else compiled now. Requires PR_SET_NO_NEW_PRIVS.
core::Result<void> apply_seccomp(const std::vector<SeccompRule>& rules);

}  // namespace pisandbox::sandbox::linux_
