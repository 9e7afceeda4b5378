// The diagnosis of `pi-sandbox doctor` fed facts directly (docs/containers.md): each cause of a
// refused unshare(CLONE_NEWUSER) gets its own line and fix, the trial run's fix names the
// container setting, the cgroup fix offers systemd-run only where pid 1 is systemd.
#include "sandbox/linux/host_diagnosis.hpp"

#include <gtest/gtest.h>

#include <cerrno>

namespace pisandbox::sandbox::linux_ {
namespace {

constexpr const char* kMeanwhile =
    "meanwhile pi-sandbox runs in its weaker mode (docs/containers.md)";
constexpr const char* kContainerFlags =
    "for the full sandbox, start the container with\n"
    "  Docker, Podman: --security-opt seccomp=unconfined --security-opt systempaths=unconfined\n"
    "    (or a seccomp profile that adds unshare, clone, clone3, mount, umount2, pivot_root,\n"
    "    open_tree, move_mount, mount_setattr and the landlock_* calls; and\n"
    "    --security-opt apparmor=unconfined where the host runs AppArmor)\n"
    "  Kubernetes: securityContext: {seccompProfile: {type: Unconfined}, procMount: Unmasked,\n"
    "    appArmorProfile: {type: Unconfined}} (procMount: Unmasked needs hostUsers: false)\n";

/// A host where unshare(CLONE_NEWUSER) failed with `err` for an unprivileged user, with
/// user.max_user_namespaces at its usual value.
HostFacts refused(int err) {
  HostFacts facts;
  facts.unshare_errno = err;
  facts.max_user_namespaces = "63336";
  facts.euid = 1000;
  return facts;
}

TEST(HostDiagnosis, WorkingNamespacesNeedNoFix) {
  const KernelCheck check = diagnose_user_namespaces(HostFacts{});
  EXPECT_TRUE(check.ok);
  EXPECT_TRUE(check.required);
  EXPECT_EQ(check.detail, "unshare(CLONE_NEWUSER) works");
  EXPECT_EQ(check.fix, "");
}

TEST(HostDiagnosis, DockerContainerGetsTheFlagsNotTheKernelConfiguration) {
  HostFacts facts = refused(EPERM);
  facts.seccomp_mode = 2;
  facts.container = {"/.dockerenv", "/proc/1/cgroup names docker"};
  const KernelCheck check = diagnose_user_namespaces(facts);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.detail,
            "unshare(CLONE_NEWUSER): EPERM; inside a container (/.dockerenv, /proc/1/cgroup "
            "names docker) whose seccomp profile refuses new user namespaces");
  EXPECT_EQ(check.fix, std::string(kContainerFlags) + kMeanwhile);
}

TEST(HostDiagnosis, SeccompFilterWithoutContainerSignsIsNamed) {
  HostFacts facts = refused(EPERM);
  facts.seccomp_mode = 2;
  const KernelCheck check = diagnose_user_namespaces(facts);
  EXPECT_EQ(check.detail,
            "unshare(CLONE_NEWUSER): EPERM; a seccomp filter around pi-sandbox (Seccomp: 2 in "
            "/proc/self/status) refuses it, as Docker's and Podman's do");
  EXPECT_EQ(check.fix, std::string(kContainerFlags) + kMeanwhile);
}

TEST(HostDiagnosis, MaxUserNamespacesZeroNamesTheSysctl) {
  HostFacts facts = refused(ENOSPC);
  facts.max_user_namespaces = "0";
  facts.seccomp_mode = 2;  // the sysctl comes first: no profile setting can lift it
  EXPECT_EQ(diagnose_user_namespaces(facts).detail,
            "unshare(CLONE_NEWUSER): ENOSPC; user.max_user_namespaces is 0");
  EXPECT_EQ(diagnose_user_namespaces(facts).fix,
            std::string("as root: sysctl -w user.max_user_namespaces=15000 (and a file in "
                        "/etc/sysctl.d to keep it); ") +
                kMeanwhile);
  facts.container = {"/run/.containerenv"};
  EXPECT_EQ(diagnose_user_namespaces(facts).fix,
            std::string("as root on the host or node (not here): sysctl -w "
                        "user.max_user_namespaces=15000 (and a file in /etc/sysctl.d to keep "
                        "it); ") +
                kMeanwhile);
}

TEST(HostDiagnosis, DebianSysctlAppliesToUnprivilegedUsersOnly) {
  HostFacts facts = refused(EPERM);
  facts.unprivileged_userns_clone = "0";
  EXPECT_EQ(diagnose_user_namespaces(facts).detail,
            "unshare(CLONE_NEWUSER): EPERM; kernel.unprivileged_userns_clone is 0");
  EXPECT_EQ(diagnose_user_namespaces(facts).fix,
            std::string("as root: sysctl -w kernel.unprivileged_userns_clone=1; ") + kMeanwhile);
  facts.euid = 0;
  EXPECT_EQ(diagnose_user_namespaces(facts).detail, "unshare(CLONE_NEWUSER): EPERM");
}

TEST(HostDiagnosis, UbuntuRestrictionWithoutProfileNamesTheProfile) {
  HostFacts facts = refused(EACCES);
  facts.apparmor_restrict = "1";
  facts.apparmor_profiles_readable = true;
  facts.apparmor_profiles = "snap.lxd.lxc (enforce)\nunprivileged_userns (enforce)\n";
  const KernelCheck check = diagnose_user_namespaces(facts);
  EXPECT_EQ(check.detail,
            "unshare(CLONE_NEWUSER): EACCES; kernel.apparmor_restrict_unprivileged_userns is 1 "
            "and no AppArmor profile grants pi-sandbox `userns`");
  EXPECT_EQ(check.fix, std::string("load the package's profile: sudo apparmor_parser -r "
                                   "/etc/apparmor.d/pi-sandbox (it names /usr/bin/pi-sandbox; "
                                   "docs/containers.md, \"Ubuntu 23.10 and later\"); ") +
                           kMeanwhile);
}

TEST(HostDiagnosis, OtherRefusalsNameNoContainer) {
  EXPECT_EQ(diagnose_user_namespaces(refused(EPERM)).fix,
            std::string("a security module or the kernel's configuration refuses unprivileged "
                        "user namespaces (user_namespaces(7)); ") +
                kMeanwhile);
  EXPECT_EQ(diagnose_user_namespaces(refused(ENOSPC)).detail,
            "unshare(CLONE_NEWUSER): ENOSPC; user.max_user_namespaces (63336) are in use, or 32 "
            "nested user namespaces are");
}

TEST(HostDiagnosis, ApparmorLinesOnlyWhereTheKernelRestricts) {
  EXPECT_TRUE(diagnose_apparmor(HostFacts{}).empty());
  HostFacts facts;
  facts.apparmor_restrict = "1";
  facts.apparmor_profiles_readable = true;
  facts.apparmor_profiles = "pi-sandbox (unconfined)\nbwrap (unconfined)\n";
  auto lines = diagnose_apparmor(facts);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].name, "AppArmor user namespace restriction");
  EXPECT_EQ(lines[0].detail,
            "kernel.apparmor_restrict_unprivileged_userns is 1 (a program needs a profile with "
            "`userns` to make them)");
  EXPECT_TRUE(lines[1].ok);
  EXPECT_EQ(lines[1].detail, "loaded");

  facts.apparmor_profiles = "bwrap (unconfined)\n";
  lines = diagnose_apparmor(facts);
  EXPECT_FALSE(lines[1].ok);
  EXPECT_FALSE(lines[1].required);
  EXPECT_EQ(lines[1].detail, "not loaded");
  EXPECT_EQ(lines[1].fix,
            "sudo apparmor_parser -r /etc/apparmor.d/pi-sandbox (the package installs it there "
            "when the kernel has this restriction)");

  facts.apparmor_profiles_readable = false;
  facts.apparmor_profiles = "";
  facts.unshare_errno = 0;  // the profile works, though an unprivileged user cannot see it
  lines = diagnose_apparmor(facts);
  EXPECT_TRUE(lines[1].ok);
  EXPECT_EQ(lines[1].detail,
            "not known: /sys/kernel/security/apparmor/profiles is readable by root only");

  facts.apparmor_restrict = "0";
  facts.unshare_errno = EPERM;
  lines = diagnose_apparmor(facts);
  EXPECT_EQ(lines[0].detail, "kernel.apparmor_restrict_unprivileged_userns is 0 (off)");
  EXPECT_TRUE(lines[1].ok);
}

TEST(HostDiagnosis, ContainerRuntimeInProc1Cgroup) {
  EXPECT_EQ(container_runtime_in_cgroup("0::/\n"), "");
  EXPECT_EQ(container_runtime_in_cgroup("12:pids:/docker/4f1e\n0::/docker/4f1e\n"), "docker");
  EXPECT_EQ(container_runtime_in_cgroup("0::/kubepods/burstable/pod1/abc\n"), "kubepods");
  EXPECT_EQ(container_runtime_in_cgroup("0::/system.slice/containerd.service\n"), "containerd");
  EXPECT_EQ(container_runtime_in_cgroup("0::/machine.slice/libpod-1234.scope\n"), "libpod");
}

TEST(HostDiagnosis, TrialRunFixNamesTheContainerSetting) {
  HostFacts facts = refused(EPERM);
  EXPECT_EQ(trial_run_fix("clone3(CLONE_NEWUSER|CLONE_NEWNS): ENOSYS (Function not implemented)",
                          facts, true),
            "a seccomp filter around pi-sandbox answers clone3 with ENOSYS, as Docker's and "
            "Podman's default profiles do (Linux 5.3 and later have clone3); the settings under "
            "\"user namespaces\" above fix it");
  EXPECT_EQ(trial_run_fix("clone3(CLONE_NEWUSER): ENOSYS", facts, false),
            std::string("a seccomp filter around pi-sandbox answers clone3 with ENOSYS, as "
                        "Docker's and Podman's default profiles do (Linux 5.3 and later have "
                        "clone3); ") +
                kContainerFlags + kMeanwhile);
  // seccomp=unconfined alone: namespaces work, the masked /proc paths refuse a new procfs.
  facts.unshare_errno = 0;
  facts.container = {"/.dockerenv"};
  EXPECT_EQ(
      trial_run_fix("mount(\"proc\", \"/proc\"): EPERM (Operation not permitted)", facts, false),
      "the kernel refuses a new /proc because paths of this one are masked (as Docker and "
      "Podman do in a container): start the container with --security-opt "
      "systempaths=unconfined as well (Kubernetes: securityContext.procMount: Unmasked); "
      "docs/containers.md");
  // Ubuntu 24.04: the namespace is made, but without capabilities.
  HostFacts ubuntu;
  ubuntu.apparmor_restrict = "1";
  EXPECT_EQ(trial_run_fix("write(/proc/7/uid_map): EPERM (Operation not permitted)", ubuntu, false),
            "kernel.apparmor_restrict_unprivileged_userns is 1, so without the AppArmor profile "
            "pi-sandbox its namespaces have no capabilities: sudo apparmor_parser -r "
            "/etc/apparmor.d/pi-sandbox (docs/containers.md, \"Ubuntu 23.10 and later\")");
  // Nothing MISSING above: no pointer to items that are not there.
  EXPECT_EQ(trial_run_fix("pivot_root(\"/x\"): EINVAL", facts, false),
            "the message names the failing step (docs/security.md, \"Layers, in the order they "
            "are applied\"; docs/containers.md for containers)");
  EXPECT_EQ(trial_run_fix("pivot_root(\"/x\"): EINVAL", facts, true),
            "see the MISSING items above; the message names the failing step");
}

TEST(HostDiagnosis, CgroupFixOffersSystemdRunOnlyUnderSystemd) {
  HostFacts facts;
  facts.pid1_systemd = true;
  EXPECT_EQ(cgroup_fix(facts),
            "without it only RLIMIT_NPROC limits processes (not for root) and nothing limits "
            "memory; run pi-sandbox in a delegated cgroup, e.g. `systemd-run --user --scope -p "
            "Delegate=yes pi-sandbox ...`, or give this user a cgroup subtree of its own by hand "
            "(docs/containers.md, \"A cgroup without systemd\")");
  facts.pid1_systemd = false;
  EXPECT_EQ(cgroup_fix(facts),
            "without it only RLIMIT_NPROC limits processes (not for root) and nothing limits "
            "memory; give this user a cgroup subtree of its own by hand (docs/containers.md, \"A "
            "cgroup without systemd\")");
}

TEST(HostDiagnosis, CgroupFixForAV2DirectorySharedWithOtherProcesses) {
  HostFacts facts;
  facts.pid1_systemd = true;
  EXPECT_EQ(cgroup_fix(facts, CgroupShortfall::SharedV2Directory),
            "without it only RLIMIT_NPROC limits processes (not for root) and nothing limits "
            "memory; the cgroup v2 directory pi-sandbox starts in holds other processes too (a "
            "shell's), and the kernel enables no controllers for child cgroups there: start "
            "pi-sandbox in a cgroup of its own, e.g. `systemd-run --user --scope -p Delegate=yes "
            "pi-sandbox ...`, or with the wrapper of docs/containers.md, \"A cgroup without "
            "systemd\"; alone there, pi-sandbox moves itself into a leaf and enables them");
  facts.pid1_systemd = false;
  EXPECT_EQ(cgroup_fix(facts, CgroupShortfall::SharedV2Directory),
            "without it only RLIMIT_NPROC limits processes (not for root) and nothing limits "
            "memory; the cgroup v2 directory pi-sandbox starts in holds other processes too (a "
            "shell's), and the kernel enables no controllers for child cgroups there: start "
            "pi-sandbox in a cgroup of its own, with the wrapper of docs/containers.md, \"A "
            "cgroup without systemd\"; alone there, pi-sandbox moves itself into a leaf and "
            "enables them");
}

TEST(HostDiagnosis, CloneHintForEnosysAndUserNamespaceErrors) {
  EXPECT_EQ(clone_hint(ENOSYS),
            "hint: Linux 5.3 and later have clone3, so a seccomp filter around pi-sandbox "
            "refuses it, as the default profiles of Docker and Podman do: run `pi-sandbox "
            "doctor` for the container settings that give the full sandbox (docs/containers.md)");
  EXPECT_EQ(clone_hint(EPERM),
            "hint: unprivileged user namespaces look disabled or restricted; run `pi-sandbox "
            "doctor` (sysctls kernel.unprivileged_userns_clone, user.max_user_namespaces, "
            "kernel.apparmor_restrict_unprivileged_userns; a container's seccomp profile)");
  EXPECT_EQ(clone_hint(ENOMEM), "");
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
