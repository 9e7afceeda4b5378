#include "sandbox/linux/host_diagnosis.hpp"

#include <cerrno>
#include <sstream>

#include "core/error.hpp"

namespace pisandbox::sandbox::linux_ {

namespace {

/// What every refusal of the namespaces ends with: the weaker mode is what runs until the fix.
constexpr std::string_view kMeanwhile =
    "meanwhile pi-sandbox runs in its weaker mode (docs/containers.md)";

/// The container settings that give the full sandbox, one line per engine (docs/containers.md).
/// Docker's and Podman's default seccomp profiles refuse new namespaces and mount without
/// CAP_SYS_ADMIN; their masked /proc paths make the kernel refuse a new procfs.
constexpr std::string_view kContainerFlags =
    "for the full sandbox, start the container with\n"
    "  Docker, Podman: --security-opt seccomp=unconfined --security-opt systempaths=unconfined\n"
    "    (or a seccomp profile that adds unshare, clone, clone3, mount, umount2, pivot_root,\n"
    "    open_tree, move_mount, mount_setattr and the landlock_* calls; and\n"
    "    --security-opt apparmor=unconfined where the host runs AppArmor)\n"
    "  Kubernetes: securityContext: {seccompProfile: {type: Unconfined}, procMount: Unmasked,\n"
    "    appArmorProfile: {type: Unconfined}} (procMount: Unmasked needs hostUsers: false)\n";

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

bool profile_loaded(const HostFacts& facts) {
  std::istringstream lines(facts.apparmor_profiles);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("pi-sandbox ")) return true;
  return false;
}

/// Where a sysctl must be set: on the host, or on the node when pi-sandbox is in a container
/// (a container cannot raise it for itself).
std::string as_root_on_host(const HostFacts& facts) {
  return facts.container.empty() ? "as root: " : "as root on the host or node (not here): ";
}

/// The cause of a refused unshare(CLONE_NEWUSER) and its fix, the first that applies.
void explain_refusal(const HostFacts& facts, KernelCheck& check) {
  if (facts.max_user_namespaces == "0") {
    check.detail += "; user.max_user_namespaces is 0";
    check.fix = as_root_on_host(facts) +
                "sysctl -w user.max_user_namespaces=15000 (and a file in /etc/sysctl.d to keep "
                "it); " +
                std::string(kMeanwhile);
  } else if (facts.unprivileged_userns_clone == "0" && facts.euid != 0) {
    check.detail += "; kernel.unprivileged_userns_clone is 0";
    check.fix = as_root_on_host(facts) + "sysctl -w kernel.unprivileged_userns_clone=1; " +
                std::string(kMeanwhile);
  } else if (facts.apparmor_restrict == "1" && !profile_loaded(facts)) {
    check.detail +=
        "; kernel.apparmor_restrict_unprivileged_userns is 1 and no AppArmor profile grants "
        "pi-sandbox `userns`";
    check.fix =
        "load the package's profile: sudo apparmor_parser -r /etc/apparmor.d/pi-sandbox (it "
        "names /usr/bin/pi-sandbox; docs/containers.md, \"Ubuntu 23.10 and later\"); " +
        std::string(kMeanwhile);
  } else if (!facts.container.empty() || facts.seccomp_mode == 2) {
    check.detail += facts.container.empty()
                        ? "; a seccomp filter around pi-sandbox (Seccomp: 2 in "
                          "/proc/self/status) refuses it, as Docker's and Podman's do"
                        : "; inside a container (" + joined(facts.container) +
                              ") whose seccomp profile refuses new user namespaces";
    check.fix = std::string(kContainerFlags) + std::string(kMeanwhile);
  } else if (facts.unshare_errno == ENOSPC) {
    check.detail += "; user.max_user_namespaces (" + facts.max_user_namespaces +
                    ") are in use, or 32 nested user namespaces are";
    check.fix =
        as_root_on_host(facts) + "raise user.max_user_namespaces; " + std::string(kMeanwhile);
  } else {
    check.fix =
        "a security module or the kernel's configuration refuses unprivileged user "
        "namespaces (user_namespaces(7)); " +
        std::string(kMeanwhile);
  }
}

}  // namespace

std::string container_runtime_in_cgroup(std::string_view proc1_cgroup) {
  for (std::string_view word : {"docker", "kubepods", "containerd", "libpod"})
    if (proc1_cgroup.find(word) != std::string_view::npos) return std::string(word);
  return {};
}

KernelCheck diagnose_user_namespaces(const HostFacts& facts) {
  KernelCheck check{"user namespaces", facts.unshare_errno == 0, true, "", ""};
  check.detail = check.ok ? "unshare(CLONE_NEWUSER) works"
                          : "unshare(CLONE_NEWUSER): " + core::errno_name(facts.unshare_errno);
  if (!check.ok) explain_refusal(facts, check);
  return check;
}

std::vector<KernelCheck> diagnose_apparmor(const HostFacts& facts) {
  if (facts.apparmor_restrict.empty()) return {};
  const bool restricted = facts.apparmor_restrict == "1";
  KernelCheck restriction{"AppArmor user namespace restriction", true, false, "", ""};
  restriction.detail =
      "kernel.apparmor_restrict_unprivileged_userns is " + facts.apparmor_restrict +
      (restricted ? " (a program needs a profile with `userns` to make them)" : " (off)");
  KernelCheck profile{"AppArmor profile pi-sandbox", true, false, "", ""};
  if (!facts.apparmor_profiles_readable) {
    profile.detail = "not known: /sys/kernel/security/apparmor/profiles is readable by root only";
    profile.ok = !restricted || facts.unshare_errno == 0;
  } else {
    profile.ok = profile_loaded(facts) || !restricted;
    profile.detail = profile_loaded(facts) ? "loaded" : "not loaded";
  }
  if (!profile.ok)
    profile.fix =
        "sudo apparmor_parser -r /etc/apparmor.d/pi-sandbox (the package installs it there when "
        "the kernel has this restriction)";
  return {restriction, profile};
}

std::string trial_run_fix(std::string_view message, const HostFacts& facts, bool missing_above) {
  const bool enosys = message.find("ENOSYS") != std::string_view::npos;
  const bool eperm = message.find("EPERM") != std::string_view::npos;
  if (message.find("clone3(") != std::string_view::npos && enosys)
    return "a seccomp filter around pi-sandbox answers clone3 with ENOSYS, as Docker's and "
           "Podman's default profiles do (Linux 5.3 and later have clone3); " +
           (missing_above ? std::string("the settings under \"user namespaces\" above fix it")
                          : std::string(kContainerFlags) + std::string(kMeanwhile));
  if (message.find("mount(\"proc\"") != std::string_view::npos && eperm)
    return std::string("the kernel refuses a new /proc because paths of this one are masked") +
           (facts.container.empty() ? "" : " (as Docker and Podman do in a container)") +
           ": start the container with --security-opt systempaths=unconfined as well "
           "(Kubernetes: securityContext.procMount: Unmasked); docs/containers.md";
  // Ubuntu's restriction lets an unconfined program make the namespace but gives it no
  // capabilities (the unprivileged_userns profile), so the failure comes later, as an EPERM.
  if (facts.apparmor_restrict == "1" && !profile_loaded(facts) &&
      (eperm || message.find("EACCES") != std::string_view::npos))
    return "kernel.apparmor_restrict_unprivileged_userns is 1, so without the AppArmor profile "
           "pi-sandbox its namespaces have no capabilities: sudo apparmor_parser -r "
           "/etc/apparmor.d/pi-sandbox (docs/containers.md, \"Ubuntu 23.10 and later\")";
  if (missing_above) return "see the MISSING items above; the message names the failing step";
  return "the message names the failing step (docs/security.md, \"Layers, in the order they "
         "are applied\"; docs/containers.md for containers)";
}

std::string cgroup_fix(const HostFacts& facts, CgroupShortfall shortfall) {
  std::string fix =
      "without it only RLIMIT_NPROC limits processes (not for root) and nothing limits "
      "memory; ";
  if (shortfall == CgroupShortfall::SharedV2Directory) {
    fix +=
        "the cgroup v2 directory pi-sandbox starts in holds other processes too (a shell's), "
        "and the kernel enables no controllers for child cgroups there: start pi-sandbox in a "
        "cgroup of its own, ";
    if (facts.pid1_systemd)
      fix += "e.g. `systemd-run --user --scope -p Delegate=yes pi-sandbox ...`, or ";
    return fix +
           "with the wrapper of docs/containers.md, \"A cgroup without systemd\"; alone there, "
           "pi-sandbox moves itself into a leaf and enables them";
  }
  if (facts.pid1_systemd)
    fix +=
        "run pi-sandbox in a delegated cgroup, e.g. `systemd-run --user --scope -p "
        "Delegate=yes pi-sandbox ...`, or ";
  fix +=
      "give this user a cgroup subtree of its own by hand (docs/containers.md, \"A cgroup "
      "without systemd\")";
  return fix;
}

std::string clone_hint(int err) {
  if (err == ENOSYS)
    return "hint: Linux 5.3 and later have clone3, so a seccomp filter around pi-sandbox "
           "refuses it, as the default profiles of Docker and Podman do: run `pi-sandbox "
           "doctor` for the container settings that give the full sandbox (docs/containers.md)";
  if (err != EPERM && err != ENOSPC && err != EINVAL && err != EACCES) return {};
  return "hint: unprivileged user namespaces look disabled or restricted; run `pi-sandbox "
         "doctor` (sysctls kernel.unprivileged_userns_clone, user.max_user_namespaces, "
         "kernel.apparmor_restrict_unprivileged_userns; a container's seccomp profile)";
}

}  // namespace pisandbox::sandbox::linux_
