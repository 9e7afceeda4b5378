// pisandbox::sandbox::linux_ — why the sandbox cannot be made here and the fix that works, for
// `pi-sandbox doctor` and `run`'s refusals (docs/containers.md). Pure: the facts are gathered
// by kernel_probe.cpp (probe_host_facts) and passed in, so the unit tests feed them directly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sandbox/linux/kernel_probe.hpp"

namespace pisandbox::sandbox::linux_ {

/// What the host shows about user namespaces and the container pi-sandbox may run in.
///   unshare_errno: errno of unshare(CLONE_NEWUSER) in a throw-away child; 0 when it worked.
///   max_user_namespaces, unprivileged_userns_clone, apparmor_restrict: the text of
///     /proc/sys/user/max_user_namespaces, /proc/sys/kernel/unprivileged_userns_clone and
///     /proc/sys/kernel/apparmor_restrict_unprivileged_userns ("" when the file is absent:
///     sysctl(8), user_namespaces(7)).
///   apparmor_profiles: the text of /sys/kernel/security/apparmor/profiles ("" when absent or
///     unreadable, as for an unprivileged user).
///   apparmor_profiles_readable: whether that file could be read.
///   seccomp_mode: the `Seccomp:` field of /proc/self/status (0 none, 1 strict, 2 filter;
///     proc(5)).
///   container: the signs of a container, each as shown to the user ("/.dockerenv",
///     "/run/.containerenv", "/proc/1/cgroup names docker"); empty when none.
///   pid1_systemd: whether /proc/1/comm is "systemd" (then `systemd-run` works).
///   euid: the effective user id (0 for root).
struct HostFacts {
  int unshare_errno = 0;
  std::string max_user_namespaces;
  std::string unprivileged_userns_clone;
  std::string apparmor_restrict;
  std::string apparmor_profiles;
  bool apparmor_profiles_readable = false;
  int seccomp_mode = 0;
  std::vector<std::string> container;
  bool pid1_systemd = false;
  unsigned euid = 0;
};

/// The words of /proc/1/cgroup (proc(5), cgroups(7)) that name a container runtime: "docker",
/// "kubepods", "containerd", "libpod"; the first found, or "" when none.
std::string container_runtime_in_cgroup(std::string_view proc1_cgroup);

/// The doctor's "user namespaces" line: whether unshare(CLONE_NEWUSER) works and, when not,
/// the cause (a sysctl at 0, Ubuntu's AppArmor restriction, a container's seccomp profile)
/// with the fix that works for it. Required: run refuses the full sandbox without it.
KernelCheck diagnose_user_namespaces(const HostFacts& facts);

/// The doctor's AppArmor line, only where the kernel has
/// kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10 and later): whether it is 1 and
/// whether the profile `pi-sandbox` (the package's /etc/apparmor.d/pi-sandbox) is loaded.
/// Empty when the sysctl is absent.
std::vector<KernelCheck> diagnose_apparmor(const HostFacts& facts);

/// The fix for a failed trial run whose error is `message` (`clone3(...): ENOSYS`,
/// `mount("proc", "/proc"): EPERM`, ...): the container setting that causes it, else the
/// MISSING items when `missing_above` (some required check failed), else where to look. The
/// container settings are given whole only when no line above gave them.
std::string trial_run_fix(std::string_view message, const HostFacts& facts, bool missing_above);

/// Why the cgroup line of `doctor` failed, for its fix.
///   NotDelegated: no cgroup this user may write with the pids and memory controllers;
///   SharedV2Directory: a delegated cgroup v2 directory that holds other processes besides
///     pi-sandbox (a terminal's scope with its shell), where the kernel enables no controllers
///     for children (cgroup-v2.rst, "No Internal Process Constraint").
enum class CgroupShortfall { NotDelegated, SharedV2Directory };

/// The fix of the cgroup line: `systemd-run` only where pid 1 is systemd; always the way
/// without systemd (docs/containers.md, "A cgroup without systemd"); for a shared v2
/// directory, that pi-sandbox needs a cgroup of its own.
std::string cgroup_fix(const HostFacts& facts,
                       CgroupShortfall shortfall = CgroupShortfall::NotDelegated);

/// The hint of `run`'s refusal when clone3 of the sandbox failed with `err`: ENOSYS names a
/// seccomp filter around pi-sandbox (Docker's and Podman's profiles answer clone3 so, to make
/// libc fall back to clone), EPERM/ENOSPC/EINVAL/EACCES the user namespace settings; both
/// point to `pi-sandbox doctor`. Empty for other errors.
std::string clone_hint(int err);

}  // namespace pisandbox::sandbox::linux_
