// The parts of `pi-sandbox policy`'s report that its Linux and macOS forms share
// (policy_command.cpp): the policy's own paths (policy_report_paths.cpp) and the sections of the
// configuration after the plans (policy_report_sections.cpp), each as text and as `--json`
// (docs/policy-json.md). Internal to cli/.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "approval/audit_log.hpp"
#include "config/config.hpp"
#include "policy/host_environment.hpp"
#include "policy/host_sockets.hpp"
#include "policy/protected_scan.hpp"
#include "policy/sandbox_policy.hpp"
#include "proxy/protocol/parent_proxy.hpp"
#include "session/session.hpp"

namespace pisandbox::cli::policy_report {

using nlohmann::json;

/// The protected paths of a command and the scan that found some of them, as both platforms'
/// reports show them.
struct Protected {
  std::vector<policy::ProtectedPath> paths;
  policy::ScanResult scan;
};

/// The policy's paths in `--json` (docs/policy-json.md): workspace, home and what is
/// re-exposed, writable, concealed, handed in or sanitized in it, the $PATH entries hidden or
/// dropped, warnings and notes, the workspace's outward links, the protection mode, the
/// protected paths and the scan's counts.
[[nodiscard]] json policy_json(const policy::SandboxPolicy& p, const Protected& prot);

/// The same as the text report's first section.
void print_paths(const policy::SandboxPolicy& p, const Protected& prot);

/// hostIPC.allowedSockets as they apply to a command started now (docs/host-ipc.md, "Host
/// sockets"): each entry with its expansion from pi-sandbox's environment.
[[nodiscard]] std::vector<policy::AllowedSocket> expanded_sockets(const config::HostIpcConfig& c);

/// `configuration` of `--json`: the file read (null: none, the defaults) and the subagents
/// settings.
[[nodiscard]] json configuration_json(const config::LoadedConfig& loaded);

/// The same as the text report's first lines.
void print_configuration(const config::LoadedConfig& loaded);

/// What both platforms' reports show after their plans: the environment filter, the network,
/// host IPC and the approvals.
///   c: the trusted configuration; parents: the caller's parent proxies (pi-sandbox's own
///   environment, docs/network.md "A parent proxy"); audit: the approval audit log's path.
struct Rest {
  const config::Config& c;
  proxy::ParentProxies parents =
      proxy::parent_proxies_from_environment(session::caller_environment());
  std::filesystem::path audit = approval::default_audit_path(session::home_directory());
  /// Where the command may write (session::writable_areas()): an allowedSockets entry there
  /// allows nothing (docs/host-ipc.md, "Host sockets").
  std::vector<policy::WritableArea> writable = {};

  /// Sets `network`, `host_ipc`, `environment` and `approval` of `--json`'s object `out`
  /// (docs/policy-json.md).
  void add_json(json& out) const;

  /// Prints the environment, network, host IPC and approvals sections, in that order.
  void print() const;
};

}  // namespace pisandbox::cli::policy_report
