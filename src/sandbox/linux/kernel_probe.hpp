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

/// Probes the running kernel: user namespaces (and the sysctls and AppArmor setting that
/// restrict them), the new mount API, pidfd/clone3, Landlock's ABI, seccomp filters.
std::vector<KernelCheck> probe_kernel();

}  // namespace pisandbox::sandbox::linux_
