// pisandbox::sandbox::linux_ — what this kernel offers, for `pi-sandbox doctor` (docs/cases.md,
// C-12).
#pragma once

#include <string>
#include <vector>

namespace pisandbox::sandbox::linux_ {

/// One line of the doctor's report.
///   name: the feature; ok: whether it is usable; required: whether run refuses without it;
///   detail: what was observed; fix: what to change when it is not ok (empty when ok).
struct KernelCheck {
  std::string name;
  bool ok = false;
  bool required = true;
  std::string detail;
  std::string fix;
};

struct HostFacts;  // sandbox/linux/host_diagnosis.hpp

/// Gathers the facts host_diagnosis.hpp reasons on: tries unshare(CLONE_NEWUSER) in a
/// throw-away child, reads the sysctls that restrict user namespaces, AppArmor's loaded
/// profiles, the `Seccomp:` field of /proc/self/status, the signs of a container
/// (/.dockerenv, /run/.containerenv, /proc/1/cgroup) and /proc/1/comm. Never fails: what
/// cannot be read stays empty.
HostFacts probe_host_facts();

/// Probes the running kernel: user namespaces (diagnosed from `facts`: the sysctls, AppArmor
/// and container settings that restrict them), the new mount API, pidfd/clone3, Landlock's
/// ABI, seccomp filters.
std::vector<KernelCheck> probe_kernel(const HostFacts& facts);

}  // namespace pisandbox::sandbox::linux_
