// pisandbox::sandbox::linux_ — the seccomp filter, installed last (STYLE.md habit 3).
//
// Kernel document: Documentation/userspace-api/seccomp_filter.rst; built with libseccomp.
// The rule table is a plain value (pure) so that `pi-sandbox policy` can print it and unit
// tests can compare it whole; apply_seccomp() turns it into BPF. Sources: compatibility
// C29-C30 and docs/security.md, "Layers, in the order they are applied".
#pragma once

#include <cstdint>
#include <optional>
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

/// Loads the filter for the calling thread and its future children. Requires
/// PR_SET_NO_NEW_PRIVS. Errors name the libseccomp call and the syscall of the row.
core::Result<void> apply_seccomp(const std::vector<SeccompRule>& rules);

}  // namespace pisandbox::sandbox::linux_
