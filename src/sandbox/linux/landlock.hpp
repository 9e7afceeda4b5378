// pisandbox::sandbox::linux_ — Landlock, the second wall behind the mount plan.
//
// Kernel document: Documentation/userspace-api/landlock.rst. The ruleset handles every
// filesystem right the running kernel's ABI knows; reads and execution are allowed
// everywhere, writes only beneath the paths of the plan. From ABI 6 on, abstract Unix
// sockets and signals are scoped to the sandbox.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::sandbox::linux_ {

/// The access a rule grants beneath its path.
enum class LandlockAccess { ReadExecute, ReadWrite };

/// One rule: `path` (absolute, in the sandbox's view) and the access granted beneath it.
struct LandlockRule {
  std::filesystem::path path;
  LandlockAccess access;

  friend bool operator==(const LandlockRule&, const LandlockRule&) = default;
};

/// The Landlock plan (pure). Rules whose path does not exist are skipped when applied.
///   grant_stdio_terminals: also allow writes to the terminal devices behind fds 0-2, which
///     live on the host's devpts and so are outside every rule's hierarchy.
///   restrict_tcp_connect: handle LANDLOCK_ACCESS_NET_CONNECT_TCP (ABI 4), so that a TCP
///     connect() reaches only `connect_ports` (host byte order), on any address; ignored below
///     ABI 4. The namespaces' sandbox has no route out and leaves it off.
struct LandlockPlan {
  std::vector<LandlockRule> rules;
  bool grant_stdio_terminals = true;
  bool restrict_tcp_connect = false;
  std::vector<std::uint16_t> connect_ports = {};

  friend bool operator==(const LandlockPlan&, const LandlockPlan&) = default;
};

/// Builds the rules for `policy`: "/" read-execute; the writable paths, the private temp
/// dirs, the hidden home layer and /dev read-write.
LandlockPlan plan_landlock(const policy::SandboxPolicy& policy);

/// The Landlock ABI version of the running kernel, or 0 when Landlock is unavailable
/// (not built, disabled at boot, or not in the `lsm=` list).
int landlock_abi_version();

/// Applies `plan` to the calling thread (and its future children) at the best ABI the kernel
/// offers. Requires PR_SET_NO_NEW_PRIVS (or CAP_SYS_ADMIN). Errors name the failing call.
core::Result<void> apply_landlock(const LandlockPlan& plan, int abi);

}  // namespace pisandbox::sandbox::linux_
