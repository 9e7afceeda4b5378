// `pi-sandbox policy`: the effective policy and the plans, as text or JSON. This file holds the
// command, the Linux sandbox's plans and limits, and the macOS sandbox's Seatbelt profile; the
// parts both reports share are in policy_report.hpp.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/policy_report.hpp"
#include "config/config.hpp"
#include "policy/git_config_guard.hpp"
#include "policy/protected_scan.hpp"
#if !defined(__APPLE__)
#include "sandbox/linux/landlock_only.hpp"
#include "sandbox/linux/runner.hpp"
#endif
#include "sandbox/macos/seatbelt.hpp"
#include "session/host_programs.hpp"
#include "session/policy_setup.hpp"

namespace pisandbox::cli {

namespace {

using nlohmann::json;
using policy_report::Protected;
using policy_report::Rest;

/// `schema_version` of `pi-sandbox policy --json` (docs/policy-json.md): raised when a field
/// is removed or changes meaning; new fields keep the version.
constexpr int kPolicySchemaVersion = 1;

// The Linux sandbox's plans, limits and Unix-socket mode: not in a build for Apple, which has
// no Linux sandbox (docs/macos.md); there `--platform linux` says so (print_linux()).
#if !defined(__APPLE__)
namespace lx = sandbox::linux_;

/// How this sandbox treats Unix sockets (docs/security.md, "Unix sockets"), in one line.
std::string unix_sockets_line(const lx::PreparedSandbox& prepared) {
  if (lx::has_notify_rows(prepared.spec.seccomp))
    return "brokered: the sandbox's own sockets work; a host socket needs hostIPC.allowedSockets "
           "or an approval";
  const std::string& missing = lx::unix_broker_unsupported();
  return "refused (socket(AF_UNIX) fails with EPERM)" +
         (missing.empty() ? std::string() : ": " + missing);
}

json unix_sockets_json(const lx::PreparedSandbox& prepared) {
  const bool brokered = lx::has_notify_rows(prepared.spec.seccomp);
  json out = {{"mode", brokered ? "brokered" : "refused"}};
  if (!brokered && !lx::unix_broker_unsupported().empty())
    out["unsupported"] = lx::unix_broker_unsupported();
  return out;
}

json plan_json(const lx::PreparedSandbox& prepared) {
  json mounts = json::array();
  for (const auto& op : prepared.spec.mounts.ops) {
    json entry = {{"op", lx::to_string(op.kind)}, {"target", op.target.string()}};
    if (op.kind == lx::MountOpKind::Bind) entry["read_only"] = op.read_only;
    if (!op.source.empty() && op.source != op.target) entry["source"] = op.source.string();
    if (!op.mode.empty()) entry["mode"] = op.mode;
    if (!op.why.empty()) entry["why"] = op.why;
    mounts.push_back(entry);
  }
  json landlock = json::array();
  for (const auto& rule : prepared.spec.landlock.rules)
    landlock.push_back(
        {{"path", rule.path.string()},
         {"access", rule.access == lx::LandlockAccess::ReadWrite ? "read-write" : "read-execute"}});
  json seccomp = json::array();
  for (const auto& rule : prepared.spec.seccomp)
    seccomp.push_back(
        {{"syscall", rule.syscall},
         {"action", rule.action == lx::SeccompAction::Notify ? "broker" : "errno"},
         {"errno", rule.action == lx::SeccompAction::Notify ? json(nullptr)
                                                            : json(core::errno_name(rule.error))},
         {"why", rule.why}});
  json guard = {{"quarantine", prepared.spec.guard.quarantine.string()}};
  json names = json::array();
  for (const auto& g : prepared.spec.guard.names)
    names.push_back({{"path", g.path.string()}, {"base", g.base.string()}, {"why", g.why}});
  json configs = json::array();
  for (const auto& c : prepared.spec.guard.configs) configs.push_back(c.path.string());
  json patterns = json::array();
  for (const auto& g : prepared.spec.guard.patterns)
    patterns.push_back({{"dir", g.dir.string()}, {"pattern", g.pattern}, {"why", g.why}});
  guard["names"] = names;
  guard["patterns"] = patterns;
  guard["configs"] = configs;
  const std::string refused = lx::namespaces_refused();
  return {{"mode", refused.empty() ? "full" : "weaker"},
          {"weaker_because", refused},
          {"mounts", mounts},
          {"guard", guard},
          {"landlock", {{"abi", prepared.spec.landlock_abi}, {"rules", landlock}}},
          {"seccomp", seccomp},
          {"unix_sockets", unix_sockets_json(prepared)}};
}

/// Where a limit's value comes from: the default, or the trusted configuration.
std::string source(bool is_default) {
  return is_default ? "default" : "configuration";
}

/// One limit's JSON: its effective value (bytes for sizes), as written, and its source.
json limits_json(const policy::SandboxPolicy& p, const policy::LimitsSpec& spec,
                 const lx::PreparedSandbox& prepared) {
  const auto& l = p.limits;
  return {{"cgroup", lx::describe(prepared.spec.cgroups)},
          {"max_processes",
           {{"value", l.max_processes},
            {"source", source(spec.max_processes == policy::kDefaultMaxProcesses)}}},
          {"memory_bytes",
           {{"value", l.memory_bytes},
            {"as_written", spec.memory.text()},
            {"source", source(spec.memory == policy::kDefaultMemory)}}},
          {"tmpfs_bytes",
           {{"value", l.tmpfs_bytes},
            {"as_written", spec.tmpfs.text()},
            {"source", source(spec.tmpfs == policy::kDefaultTmpfs)}}},
          {"cpu_weight",
           {{"value", l.cpu_weight},
            {"source", source(spec.cpu_weight == policy::kDefaultCpuWeight)}}}};
}

void print_limits(const policy::SandboxPolicy& p, const policy::LimitsSpec& spec,
                  const lx::PreparedSandbox& prepared) {
  const auto& l = p.limits;
  std::cout << "resource limits (" << lx::describe(prepared.spec.cgroups) << "):\n"
            << "  processes: " << l.max_processes << "  ["
            << source(spec.max_processes == policy::kDefaultMaxProcesses) << "]\n"
            << "  memory: " << policy::mebibytes(l.memory_bytes) << " (" << spec.memory.text()
            << ")  [" << source(spec.memory == policy::kDefaultMemory) << "]\n"
            << "  tmpfs budget (/tmp, /var/tmp, /dev/shm, the hidden home together): "
            << policy::mebibytes(l.tmpfs_bytes) << " (" << spec.tmpfs.text() << ")  ["
            << source(spec.tmpfs == policy::kDefaultTmpfs) << "]\n"
            << "  cpu weight: " << l.cpu_weight << " (a cgroup's default is 100)  ["
            << source(spec.cpu_weight == policy::kDefaultCpuWeight) << "]\n";
}
#endif  // !defined(__APPLE__)

#if !defined(__APPLE__)
void print_linux_plan(const policy::SandboxPolicy& p, const lx::PreparedSandbox& prepared) {
  std::cout << "mount plan:\n";
  for (const auto& op : prepared.spec.mounts.ops) std::cout << "  " << lx::describe(op) << "\n";
  std::cout << "guard (filesystem.protection: " << policy::to_string(p.protection)
            << "; what a command creates at a guarded name goes to the quarantine "
            << prepared.spec.guard.quarantine.string() << "):\n";
  for (const auto& g : prepared.spec.guard.names)
    std::cout << "  guard-name        " << g.path.string() << "  # " << g.why << "\n";
  for (const auto& g : prepared.spec.guard.patterns)
    std::cout << "  guard-pattern     " << (g.dir / g.pattern).string() << "  # " << g.why
              << " (the root's entries that match)\n";
  for (const auto& c : prepared.spec.guard.configs)
    std::cout << "  guard-git-config  " << c.path.string()
              << "  # a change may add only keys of the allowlist of keys that run nothing "
                 "(docs/security.md, \"The git configuration guard\")\n";
  if (!prepared.spec.guard.configs.empty()) {
    std::string keys;
    for (const auto line : policy::allowed_git_config_patterns())
      keys += (keys.empty() ? "" : ", ") + std::string(line);
    std::cout << "  git keys a command may add or change: " << keys << "\n";
  }
  if (const std::string refused = lx::namespaces_refused(); !refused.empty())
    std::cout << "mode: the weaker sandbox, user namespaces cannot be made here (" << refused
              << "); Landlock, seccomp and the proxy on the host's loopback confine commands "
                 "instead (docs/security.md, \"Where namespaces cannot be made\"); "
              << lx::kLandlockOnlyLimits << "\n";
  std::cout << "landlock (ABI " << prepared.spec.landlock_abi
            << (prepared.spec.landlock_abi == 0 ? ", unavailable" : "") << "):\n";
  for (const auto& rule : prepared.spec.landlock.rules)
    std::cout << "  "
              << (rule.access == lx::LandlockAccess::ReadWrite ? "read-write   " : "read-execute ")
              << rule.path.string() << "\n";
  std::cout << "seccomp (everything else allowed; foreign-architecture syscalls kill):\n";
  for (const auto& rule : prepared.spec.seccomp)
    std::cout << "  " << rule.syscall << " -> "
              << (rule.action == lx::SeccompAction::Notify ? std::string("broker")
                                                           : core::errno_name(rule.error))
              << "  # " << rule.why << "\n";
  std::cout << "unix sockets: " << unix_sockets_line(prepared) << "\n";
}
#endif  // !defined(__APPLE__)

// --- The macOS sandbox (docs/macos.md): the Seatbelt profile, printable on any platform.

/// The platform whose sandbox `pi-sandbox policy` shows by default (`--platform`).
#ifdef __APPLE__
constexpr std::string_view kHostPlatform = "macos";
#else
constexpr std::string_view kHostPlatform = "linux";
#endif

/// The Seatbelt profile of `p` with the example per-command values (sandbox::macos::
/// example_inputs()) and this configuration's hostIPC.allowedSockets.
std::string seatbelt_text(const policy::SandboxPolicy& p, const Protected& prot,
                          const config::HostIpcConfig& c) {
  auto inputs = sandbox::macos::example_inputs();
  for (const auto& s : policy_report::expanded_sockets(c))
    if (s.path) inputs.allowed_sockets.emplace_back(*s.path);
  return sandbox::macos::render(
      sandbox::macos::plan_seatbelt(p, prot.paths, inputs, sandbox::macos::host_path_exists));
}

json seatbelt_json(const policy::SandboxPolicy& p, const Protected& prot,
                   const config::HostIpcConfig& c) {
  const auto inputs = sandbox::macos::example_inputs();
  return {{"profile", seatbelt_text(p, prot, c)},
          {"example_inputs",
           {{"temp_dir", inputs.temp_dir.string()},
            {"home_layer", inputs.home_layer.string()},
            {"http_port", inputs.http_port},
            {"socks_port", inputs.socks_port}}}};
}

void print_seatbelt(const policy::SandboxPolicy& p, const Protected& prot,
                    const config::HostIpcConfig& c) {
  const auto inputs = sandbox::macos::example_inputs();
  std::cout << "seatbelt profile (sandbox-exec -p; the per-command values are examples: temporary "
               "directory "
            << inputs.temp_dir.string() << ", home layer " << inputs.home_layer.string()
            << ", proxy ports " << inputs.http_port << " and " << inputs.socks_port
            << "; `--sbpl` prints the profile alone):\n";
  std::string text = seatbelt_text(p, prot, c);
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    std::cout << "  " << text.substr(start, end - start) << "\n";
    start = end == std::string::npos ? text.size() : end + 1;
  }
}

/// What `pi-sandbox policy` was asked to print.
struct PolicyOutput {
  bool json = false;
  std::string platform = std::string(kHostPlatform);
  bool sbpl = false;  ///< the Seatbelt profile alone
};

/// The report of the Linux sandbox (the plans of sandbox/linux).
#if defined(__APPLE__)
int print_linux(const policy::SandboxPolicy&, const config::LoadedConfig&, bool) {
  print_error(
      "--platform linux shows the Linux sandbox's plans, which this macOS build does not contain "
      "(docs/macos.md): run it on Linux, or leave out --platform for the Seatbelt profile");
  return 2;
}
#else
int print_linux(const policy::SandboxPolicy& p, const config::LoadedConfig& loaded, bool as_json) {
  auto prepared = lx::prepare_sandbox(p, {});
  if (!prepared) {
    print_error(prepared.error().describe());
    return 2;
  }
  const Protected prot{prepared->protected_paths, prepared->scan};
  const Rest rest{.c = *loaded.config, .writable = session::writable_areas(p)};
  if (as_json) {
    json out = {{"schema_version", kPolicySchemaVersion},
                {"configuration", policy_report::configuration_json(loaded)}};
    out.update(policy_report::policy_json(p, prot));
    out["plan"] = plan_json(*prepared);
    out["limits"] = limits_json(p, rest.c.limits, *prepared);
    rest.add_json(out);
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  policy_report::print_configuration(loaded);
  policy_report::print_paths(p, prot);
  print_linux_plan(p, *prepared);
  print_limits(p, rest.c.limits, *prepared);
  rest.print();
  return 0;
}
#endif

/// The report of the macOS sandbox (docs/macos.md): the same policy, its Seatbelt profile in
/// place of the Linux plans, and no resource limits (not applied on macOS).
int print_macos(const policy::SandboxPolicy& p, const config::LoadedConfig& loaded,
                const PolicyOutput& output) {
  auto scan = policy::scan_writable_roots(p, policy::scan_options(p));
  const Protected prot{policy::merge_protected(p.protected_paths, scan.protected_paths),
                       std::move(scan)};
  const config::HostIpcConfig& host_ipc = loaded.config->host_ipc;
  if (output.sbpl) {
    std::cout << seatbelt_text(p, prot, host_ipc);
    return 0;
  }
  const Rest rest{.c = *loaded.config, .writable = session::writable_areas(p)};
  if (output.json) {
    json out = {{"schema_version", kPolicySchemaVersion},
                {"platform", "macos"},
                {"configuration", policy_report::configuration_json(loaded)}};
    out.update(policy_report::policy_json(p, prot));
    out["seatbelt"] = seatbelt_json(p, prot, host_ipc);
    rest.add_json(out);
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  policy_report::print_configuration(loaded);
  policy_report::print_paths(p, prot);
  print_seatbelt(p, prot, host_ipc);
  rest.print();
  return 0;
}

}  // namespace

void add_policy_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<session::PolicyArgs>();
  auto output = std::make_shared<PolicyOutput>();
  CLI::App* cmd = app.add_subcommand("policy", "Show the effective policy and the mount plan");
  cmd->add_option("--cwd", args->cwd, "Workspace (default: the current directory)");
  cmd->add_option("--config", args->config, "Trusted configuration file");
  cmd->add_flag("--json", output->json, "Print JSON");
  cmd->add_option("--platform", output->platform,
                  "Whose sandbox to show: linux or macos (default: this machine's)")
      ->check(CLI::IsMember({"linux", "macos"}));
  cmd->add_flag("--sbpl", output->sbpl,
                "Print the macOS Seatbelt profile alone (implies --platform macos)");
  cmd->callback([cmd, args, output, &exit_code] {
    if (output->sbpl && output->json) {
      print_error(
          "--sbpl prints the Seatbelt profile as text: it cannot be combined with --json "
          "(the JSON carries it as .seatbelt.profile)");
      exit_code = 2;
      return;
    }
    if (output->sbpl && cmd->count("--platform") > 0 && output->platform == "linux") {
      print_error(
          "--sbpl prints the macOS Seatbelt profile: it cannot be combined with --platform "
          "linux");
      exit_code = 2;
      return;
    }
    config::LoadedConfig loaded;
    auto p = session::build_policy(*args, &loaded);
    if (!p) {
      print_error(p.error().describe());
      exit_code = 2;
      return;
    }
    exit_code = output->sbpl || output->platform == "macos" ? print_macos(*p, loaded, *output)
                                                            : print_linux(*p, loaded, output->json);
  });
}

}  // namespace pisandbox::cli
