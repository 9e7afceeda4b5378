// `pi-sandbox doctor`: what this kernel offers, what is missing, how to fix it (docs/cases.md,
// C-12).
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "sandbox/linux/cgroup.hpp"
#include "sandbox/linux/host_diagnosis.hpp"
#include "sandbox/linux/kernel_probe.hpp"
#include "sandbox/linux/landlock_only.hpp"
#include "sandbox/linux/runner.hpp"
#include "session/policy_setup.hpp"

namespace pisandbox::cli {

namespace {

/// The policy of a scratch workspace in /tmp (removed when this goes), as `run` builds it.
class ScratchPolicy {
 public:
  ScratchPolicy() {
    char scratch[] = "/tmp/pi-sandbox-doctor-XXXXXX";
    if (::mkdtemp(scratch) == nullptr) {
      policy = core::fail_errno("mkdtemp(\"/tmp/pi-sandbox-doctor-XXXXXX\")",
                                "hint: make /tmp writable");
      return;
    }
    dir_ = scratch;
    session::PolicyArgs args;
    args.cwd = dir_;
    policy = session::build_policy(args);
  }
  ~ScratchPolicy() {
    std::error_code error;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, error);
  }
  ScratchPolicy(const ScratchPolicy&) = delete;
  ScratchPolicy& operator=(const ScratchPolicy&) = delete;

  core::Result<policy::SandboxPolicy> policy = core::fail("not built");

 private:
  std::string dir_;
};

/// What to do about a policy that could not be built: the error's hint without its `hint: `,
/// else to fix the configuration.
std::string configuration_fix(const core::Error& error) {
  if (error.hint.empty()) return "fix the configuration (pi-sandbox config check)";
  return error.hint.starts_with("hint: ") ? error.hint.substr(6) : error.hint;
}

/// The definitive check: the whole sandbox (namespaces, mounts, Landlock, seccomp) around
/// /bin/true in a scratch workspace, exactly as `run` builds it. `missing_above`: whether a
/// required check before it failed (its fix then points there).
sandbox::linux_::KernelCheck trial_run(const ScratchPolicy& scratch,
                                       const sandbox::linux_::HostFacts& facts,
                                       bool missing_above) {
  sandbox::linux_::KernelCheck check{"a sandboxed /bin/true", false, true, "", ""};
  const auto& policy = scratch.policy;
  if (!policy) {
    check.detail = policy.error().message;
    check.fix = configuration_fix(policy.error());
    return check;
  }
  std::string warnings;
  sandbox::Outcome outcome =
      policy ? sandbox::linux_::run_sandboxed(
                   *policy, sandbox::Command{{"/bin/true"}, policy->workspace, {"PATH=/bin"}},
                   // The cgroup has a line of its own above.
                   sandbox::RunOptions{.say_no_cgroup = [] { return false; }},
                   [&](const std::string& line) { warnings += line + "; "; })
             : std::unexpected(sandbox::RunFailure{sandbox::RunFailureKind::LaunchFailed,
                                                   policy.error().describe()});
  check.ok = outcome && std::holds_alternative<sandbox::Exited>(*outcome) &&
             std::get<sandbox::Exited>(*outcome).code == 0;
  // The first line of the refusal: its `hint:` points back to doctor, whose fix line says more.
  check.detail =
      check.ok ? "works"
               : (outcome ? "did not exit 0"
                          : outcome.error().message.substr(0, outcome.error().message.find('\n')));
  if (!warnings.empty()) check.detail += " (" + warnings.substr(0, warnings.size() - 2) + ")";
  if (!check.ok) check.fix = sandbox::linux_::trial_run_fix(check.detail, facts, missing_above);
  return check;
}

/// Whether the caller's $PATH works inside: entries inside the hidden home are re-exposed
/// with their toolchains (docs/security.md, "Toolchains in the home"), or named here.
sandbox::linux_::KernelCheck path_check(const ScratchPolicy& scratch) {
  sandbox::linux_::KernelCheck check{"$PATH entries inside the hidden home", false, false, "", ""};
  const auto& policy = scratch.policy;
  if (!policy) {
    // The policy itself could not be built (a refused configuration): one line here, its
    // hint as the fix.
    check.detail = "not checked: " + policy.error().message;
    check.fix = configuration_fix(policy.error());
    return check;
  }
  std::size_t toolchains = 0;
  for (const auto& e : policy->home_read_allowed)
    if (e.origin == policy::Origin::Toolchain) ++toolchains;
  check.ok = policy->hidden_path_dirs.empty();
  if (check.ok) {
    check.detail = toolchains == 0 ? "none"
                                   : "re-exposed, copy-on-write (" + std::to_string(toolchains) +
                                         " directories: pi-sandbox policy lists them)";
    return check;
  }
  check.detail = "hidden, so their programs are not found inside:";
  for (const auto& dir : policy->hidden_path_dirs) check.detail += " " + dir.string();
  check.fix =
      "nothing re-exposes them while filesystem.exposeHomeToolchains is false, nor ever the "
      "home itself or a credential store (~/.ssh, ~/.docker, ...: docs/security.md, "
      "\"Toolchains in the home\"); list the directories you need in "
      "filesystem.additionalAllowRead (docs/configuration.md)";
  return check;
}

/// Whether each command can get its own cgroup (docs/security.md, "Resource limits").
sandbox::linux_::KernelCheck cgroup_check(const sandbox::linux_::HostFacts& facts) {
  const auto support = sandbox::linux_::probe_cgroups();
  sandbox::linux_::KernelCheck check{"a cgroup per command (resource limits)", false, false,
                                     sandbox::linux_::describe(support), ""};
  check.ok = support.kind != sandbox::linux_::CgroupSupport::Kind::None;
  if (!check.ok)
    check.fix = sandbox::linux_::cgroup_fix(
        facts, support.shared ? sandbox::linux_::CgroupShortfall::SharedV2Directory
                              : sandbox::linux_::CgroupShortfall::NotDelegated);
  return check;
}

/// A fix under its check: its first line after `fix:`, the others indented under it.
void print_fix(const std::string& fix) {
  std::istringstream lines(fix);
  std::string line;
  std::getline(lines, line);
  std::cout << "         fix: " << line << "\n";
  while (std::getline(lines, line)) std::cout << "              " << line << "\n";
}

}  // namespace

void add_doctor_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("doctor", "Check what this kernel offers the sandbox");
  cmd->callback([&exit_code] {
    // As `run` does, before its trial run forks anything (docs/security.md, "Resource limits").
    sandbox::linux_::prepare_cgroup_delegation();
    bool usable = true;
    const auto facts = sandbox::linux_::probe_host_facts();
    auto checks = sandbox::linux_::probe_kernel(facts);
    checks.push_back(cgroup_check(facts));
    const ScratchPolicy scratch;
    checks.push_back(path_check(scratch));
    const bool missing_above =
        std::ranges::any_of(checks, [](const auto& check) { return check.required && !check.ok; });
    sandbox::linux_::KernelCheck weaker = sandbox::linux_::landlock_only_check();
    // What keeps the namespaces from being made, where no check above says it (a masked
    // /proc: only the mount of a new one fails).
    if (!weaker.ok && !weaker.required && !missing_above)
      weaker.fix = sandbox::linux_::trial_run_fix(weaker.detail, facts, missing_above) +
                   "; docs/security.md, \"Where namespaces cannot be made\"";
    checks.push_back(weaker);
    checks.push_back(trial_run(scratch, facts, missing_above));
    for (const auto& check : checks) {
      const char* status = check.ok ? "ok     " : (check.required ? "MISSING" : "weaker ");
      std::cout << status << "  " << check.name << ": " << check.detail << "\n";
      if (!check.ok) print_fix(check.fix);
      if (!check.ok && check.required) usable = false;
    }
    // Where the weaker sandbox runs, the namespaces are MISSING but commands do run.
    const bool weaker_runs = !weaker.ok && !weaker.required && checks.back().ok;
    std::cout << (weaker_runs && !usable
                      ? "pi-sandbox runs commands here in the weaker sandbox until the MISSING "
                        "items are fixed.\n"
                  : weaker_runs ? "pi-sandbox runs commands here in the weaker sandbox until the "
                                  "fix of the weaker sandbox above is applied.\n"
                  : usable      ? "pi-sandbox can run commands here.\n"
                                : "pi-sandbox refuses to run commands here until the MISSING "
                                  "items are fixed (it never runs a command unsandboxed).\n");
    exit_code = usable && !weaker_runs ? 0 : 1;
  });
}

}  // namespace pisandbox::cli
