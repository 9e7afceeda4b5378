// `pi-sandbox policy`: the effective policy and the plans, as text or JSON.
#include <fcntl.h>

#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>

#include "approval/audit_log.hpp"
#include "cli/commands.hpp"
#include "config/config.hpp"
#include "core/unique_fd.hpp"
#include "policy/credential_lines.hpp"
#include "policy/environment.hpp"
#include "policy/git_config_guard.hpp"
#include "policy/host_sockets.hpp"
#include "policy/protected_scan.hpp"
#include "policy/workspace_links.hpp"
#include "proxy/protocol/parent_proxy.hpp"
#if !defined(__APPLE__)
#include "sandbox/linux/landlock_only.hpp"
#include "sandbox/linux/runner.hpp"
#endif
#include "sandbox/macos/seatbelt.hpp"
#include "session/approval_setup.hpp"
#include "session/host_programs.hpp"
#include "session/policy_setup.hpp"
#include "session/session.hpp"

namespace pisandbox::cli {

namespace {

using nlohmann::json;

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

/// The protected paths of a command and the scan that found some of them, as both platforms'
/// reports show them.
struct Protected {
  std::vector<policy::ProtectedPath> paths;
  policy::ScanResult scan;
};

/// The caller's `$PATH` entries that programs pi-sandbox starts on the host do not search:
/// relative, empty, or in a place the command can write (docs/security.md, "What pi-sandbox
/// starts on the host").
std::vector<std::string> host_dropped_path_entries(const policy::SandboxPolicy& p) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return {};
  return policy::dropped_search_entries(path, session::writable_areas(p),
                                        [](const std::filesystem::path& entry) {
                                          return session::would_be_found_at(entry.string());
                                        });
}

/// The credentials found under other names (hard links, binds) and the links not found.
json credential_links_json(const policy::ScanResult& scan) {
  json out = json::array();
  for (const auto& link : scan.credential_links)
    out.push_back({{"path", link.path.string()}, {"credential", link.credential.string()}});
  for (const auto& [credential, count] : scan.unlocated_links)
    out.push_back({{"path", nullptr}, {"credential", credential.string()}, {"unlocated", count}});
  return out;
}

/// The copy a command would see of `copy`'s file now (it is made again for each command), or
/// nullopt when the file does not exist.
std::optional<policy::SanitizedConfig> current_copy(const policy::SanitizedCopy& copy) {
  core::UniqueFd fd(::open(copy.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd && errno == ENOENT) return std::nullopt;
  if (!fd)
    return policy::SanitizedConfig{
        {}, {}, "open(\"" + copy.path.string() + "\", O_RDONLY): " + strerrorname_np(errno)};
  return policy::sanitize_config_fd(copy.format, fd.get());
}

/// The sanitized copies of existing files: what each lacks, by line and key, never a value.
json sanitized_json(const policy::SandboxPolicy& p) {
  json out = json::array();
  for (const auto& copy : p.sanitized) {
    const auto current = current_copy(copy);
    if (!current) continue;
    json removed = json::array();
    for (const auto& item : current->removed)
      removed.push_back({{"line", item.line}, {"key", item.key}});
    out.push_back({{"path", copy.path.string()},
                   {"format", policy::to_string(copy.format)},
                   {"removed", removed},
                   {"shown_empty",
                    current->masked_whole.empty() ? json(nullptr) : json(current->masked_whole)}});
  }
  return out;
}

void print_sanitized(const policy::SandboxPolicy& p) {
  for (const auto& copy : p.sanitized) {
    const auto current = current_copy(copy);
    if (!current) continue;
    std::cout << "  sanitized copy (read-only, without its credentials): " << copy.path.string()
              << "\n";
    if (!current->masked_whole.empty())
      std::cout << "    shown empty: " << current->masked_whole << "\n";
    for (const auto& item : current->removed)
      std::cout << "    line " << item.line << ": " << item.key << " removed\n";
  }
}

/// The links of the workspace that lead out of it (policy/workspace_links.hpp): a section
/// only when there is one.
void print_outward_links(const policy::SandboxPolicy& p) {
  const policy::LinkScan scan = policy::find_outward_links(p);
  if (scan.links.empty() && !scan.truncated) return;
  std::cout << "links out of the workspace (its entries and their entries"
            << (scan.truncated ? ", the first " + std::to_string(policy::kLinkScanEntries) : "")
            << "):\n";
  for (const auto& link : scan.links)
    std::cout << "  " << link.link.lexically_relative(p.workspace).string() << " -> "
              << link.resolved.string() << (link.missing ? " (missing on the host)" : "") << ": "
              << policy::to_string(link.access.view) << "  # " << link.access.why << "\n";
}

/// find_outward_links() for `--json`: `{link, target, resolved, missing, access, why}`.
json outward_links_json(const policy::SandboxPolicy& p) {
  json out = json::array();
  for (const auto& link : policy::find_outward_links(p).links)
    out.push_back({{"link", link.link.string()},
                   {"target", link.target.string()},
                   {"resolved", link.resolved.string()},
                   {"missing", link.missing},
                   {"access", policy::to_string(link.access.view)},
                   {"why", link.access.why}});
  return out;
}

json policy_json(const policy::SandboxPolicy& p, const Protected& prot) {
  json protected_paths = json::array();
  for (const auto& item : prot.paths)
    protected_paths.push_back(
        {{"path", item.path.string()},
         {"reason", policy::to_string(item.reason)},
         {"kind", item.kind == policy::NodeKind::Directory ? "directory" : "file"},
         {"even_if_missing", item.create_if_missing}});
  const auto exposures = [](const std::vector<policy::Exposure>& list) {
    json out = json::array();
    for (const auto& e : list)
      out.push_back(
          {{"path", e.path.string()}, {"access", policy::to_string(e.access)}, {"why", e.why}});
    return out;
  };
  const auto paths = [](const std::vector<std::filesystem::path>& list) {
    json out = json::array();
    for (const auto& path : list) out.push_back(path.string());
    return out;
  };
  return {{"workspace", p.workspace.string()},
          {"home", p.home.string()},
          {"home_hidden", p.hide_home},
          {"home_read_allowed", exposures(p.home_read_allowed)},
          {"writable", exposures(p.writable)},
          {"concealed", paths(p.concealed)},
          {"credential_links", credential_links_json(prot.scan)},
          {"handed_in", paths(p.handed_in)},
          {"sanitized", sanitized_json(p)},
          {"hidden_path_entries", paths(p.hidden_path_dirs)},
          {"host_dropped_path_entries", host_dropped_path_entries(p)},
          {"warnings", p.warnings},
          {"notes", p.notes},
          {"workspace_links", outward_links_json(p)},
          {"private_tmp", p.private_tmp},
          {"protection", policy::to_string(p.protection)},
          {"protected", protected_paths},
          {"scan",
           {{"directories_read", prot.scan.directories_read},
            {"entries_seen", prot.scan.entries_seen}}}};
}

void print_paths(const policy::SandboxPolicy& p, const Protected& prot) {
  std::cout << "workspace (read-write): " << p.workspace.string() << "\n"
            << "home: " << p.home.string()
            << (p.hide_home ? " (hidden: an empty, private, throw-away layer)" : " (not hidden)")
            << "\n";
  for (const auto& e : p.home_read_allowed)
    std::cout << "  re-exposed " << policy::to_string(e.access) << ": " << e.path.string()
              << (e.why.empty() ? "" : "  # " + e.why) << "\n";
  for (const auto& path : p.concealed)
    std::cout << "  concealed (credential): " << path.string() << "\n";
  for (const auto& link : prot.scan.credential_links)
    std::cout << "  concealed (the credential " << link.credential.string()
              << " under another name): " << link.path.string() << "\n";
  for (const auto& [credential, count] : prot.scan.unlocated_links)
    std::cout << "  note: " << count << " other hard link(s) of the credential "
              << credential.string()
              << " lie outside the places searched (docs/security.md, \"Hard links and binds of "
                 "a credential\")\n";
  for (const auto& path : p.handed_in)
    std::cout << "  handed in (credential, read-only): " << path.string()
              << "  # filesystem.exposeCredentials\n";
  print_sanitized(p);
  for (const auto& path : p.hidden_path_dirs)
    std::cout << "  hidden $PATH entry (its programs are not found inside): " << path.string()
              << "\n";
  for (const auto& e : p.writable)
    if (e.path != p.workspace)
      std::cout << "also read-write: " << e.path.string() << "  # " << e.why << "\n";
  for (const auto& entry : host_dropped_path_entries(p)) {
    const char* why = entry.empty()          ? "is empty (the working directory)"
                      : entry.front() != '/' ? "is relative (found from the working directory)"
                                             : "lies inside the workspace or another writable root";
    std::cout << "$PATH entry \"" << entry << "\" " << why
              << ": dropped from the environment of programs pi-sandbox starts on the host\n";
  }
  print_outward_links(p);
  for (const auto& warning : p.warnings) std::cout << "warning: " << warning << "\n";
  for (const auto& note : p.notes) std::cout << "note: " << note << "\n";
  std::cout << "private /tmp and /var/tmp: " << (p.private_tmp ? "yes" : "no") << "\n"
            << "protected paths (" << prot.paths.size() << ", scan read "
            << prot.scan.directories_read << " directories, " << prot.scan.entries_seen
            << " entries):\n";
  // A missing secret is not protected with the guard (docs/security.md, "The guard").
  for (const auto& item : prot.paths)
    std::cout << "  " << item.path.string() << "  [" << policy::to_string(item.reason)
              << (item.create_if_missing && !(p.protection == policy::Protection::Guard &&
                                              item.reason == policy::ProtectReason::Secret)
                      ? ", even if missing"
                      : "")
              << "]\n";
}

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

// --- The environment policy (docs/security.md, "Environment"): names only, never values.

/// `default` or `configuration`: which rule removed a variable.
std::string_view to_string(policy::RemovalSource source) {
  return source == policy::RemovalSource::Default ? "default" : "configuration";
}

/// The environment policy and what it removes from pi-sandbox's own (the caller's) environment.
json environment_json(const policy::EnvironmentSpec& spec) {
  const auto decided = policy::filter_environment(session::caller_environment(), spec);
  json removed = json::array();
  for (const auto& r : decided.removed)
    removed.push_back({{"name", r.name}, {"rule", r.rule}, {"source", to_string(r.source)}});
  return {{"default_removed", policy::kDefaultRemoved},
          {"default_kept", policy::kDefaultKept},
          {"pass_through", spec.pass_through},
          {"remove", spec.remove},
          {"removed", removed},
          {"set", policy::sandbox_variable_names()}};
}

/// `a, b, c`, or `none`.
template <typename Names>
std::string listed(const Names& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "none" : out;
}

void print_environment(const policy::EnvironmentSpec& spec) {
  const auto decided = policy::filter_environment(session::caller_environment(), spec);
  std::cout << "environment (the caller's, less credentials):\n"
            << "  removed by default: " << listed(policy::kDefaultRemoved) << "\n"
            << "  kept by default (certificate paths, no secret): " << listed(policy::kDefaultKept)
            << "\n"
            << "  environment.passThrough: " << listed(spec.pass_through) << "\n"
            << "  environment.remove: " << listed(spec.remove) << "\n"
            << "  removed from this environment:" << (decided.removed.empty() ? " none" : "")
            << "\n";
  for (const auto& r : decided.removed)
    std::cout << "    " << r.name << "  ["
              << (r.source == policy::RemovalSource::Default ? "default rule "
                                                             : "environment.remove entry ")
              << r.rule << "]\n";
  std::cout << "  set by pi-sandbox (the caller's values replaced, JAVA_TOOL_OPTIONS merged): "
            << listed(policy::sandbox_variable_names()) << "\n";
}

// --- The proxy chain (docs/network.md, "A parent proxy"): never a parent's credentials.

json parent_json(const std::optional<proxy::ParentSetting>& setting) {
  if (!setting) return nullptr;
  if (!setting->proxy) return {{"variable", setting->variable}, {"error", setting->proxy.error()}};
  return {{"variable", setting->variable},
          {"url", setting->proxy->display()},
          {"credentials", setting->proxy->user.has_value()}};
}

/// The canonical texts of `patterns` (policy::DomainPattern::text).
json pattern_texts(const std::vector<policy::DomainPattern>& patterns) {
  json out = json::array();
  for (const auto& pattern : patterns) out.push_back(pattern.text());
  return out;
}

json network_json(const config::NetworkConfig& lists, const proxy::ParentProxies& parents) {
  return {
      {"allowed_domains", pattern_texts(lists.allowed_domains)},
      {"denied_domains", pattern_texts(lists.denied_domains)},
      {"parent_proxy",
       {{"connect_and_socks5", parent_json(parents.tunnel)}, {"http", parent_json(parents.plain)}}},
      {"no_proxy",
       {{"variable", parents.no_proxy_variable},
        {"all", parents.no_proxy.all()},
        {"domains", parents.no_proxy.domains()},
        {"ignored", parents.no_proxy.ignored()}}}};
}

std::string parent_text(const std::optional<proxy::ParentSetting>& setting) {
  if (!setting) return "none (directly)";
  if (!setting->proxy)
    return "unusable (from " + setting->variable + "): its URL " + setting->proxy.error() +
           "; these connections fail";
  return setting->proxy->display() + " (credentials: " + (setting->proxy->user ? "yes" : "no") +
         ", from " + setting->variable + ")";
}

/// `a, b`, or `none` for an empty list of patterns.
std::string pattern_list(const std::vector<policy::DomainPattern>& patterns) {
  std::vector<std::string> texts;
  for (const auto& pattern : patterns) texts.push_back(pattern.text());
  return listed(texts);
}

void print_network(const config::NetworkConfig& lists, const proxy::ParentProxies& parents) {
  std::cout << "network: the command -> pi-sandbox's proxy (127.0.0.1:3128 HTTP, 127.0.0.1:1080 "
               "SOCKS5) -> "
            << (parents.any() ? "the parent proxy, unless NO_PROXY matches" : "directly")
            << " -> the destination\n";
  if (parents.any()) {
    std::cout << "  parent proxy for CONNECT and SOCKS5: " << parent_text(parents.tunnel) << "\n"
              << "  parent proxy for http:// requests: " << parent_text(parents.plain) << "\n";
    if (!parents.no_proxy_variable.empty()) {
      const auto& no_proxy = parents.no_proxy;
      std::cout << "  directly (" << parents.no_proxy_variable << "): "
                << (no_proxy.all() ? std::string("every destination") : listed(no_proxy.domains()));
      if (!no_proxy.ignored().empty())
        std::cout << "; ignored (addresses and ports never match a host name): "
                  << listed(no_proxy.ignored());
      std::cout << "\n";
    }
  }
  std::cout << "  network.allowedDomains (connect without asking): "
            << pattern_list(lists.allowed_domains) << "\n"
            << "  network.deniedDomains (refused without asking): "
            << pattern_list(lists.denied_domains) << "\n"
            << "  any other destination: asked for, connection by connection (docs/network.md)\n";
}

// --- Host IPC, approvals and the configuration file (docs/host-ipc.md, docs/approvals.md).

/// hostIPC.allowedSockets as they apply to a command started now (docs/host-ipc.md, "Host
/// sockets"): each entry with its expansion from pi-sandbox's environment.
std::vector<policy::AllowedSocket> expanded_sockets(const config::HostIpcConfig& c) {
  return policy::allowed_sockets(c.allowed_sockets, session::caller_environment(),
                                 session::home_directory().string());
}

json host_ipc_json(const config::HostIpcConfig& c) {
  json sockets = json::array();
  for (const auto& s : expanded_sockets(c))
    sockets.push_back({{"entry", s.entry}, {"path", s.path ? json(*s.path) : json(nullptr)}});
  return {{"mode", config::to_string(c.mode)},
          {"preflight_command_prefixes", c.preflight_command_prefixes},
          {"retry_on_unix_socket_error", c.retry_on_unix_socket_error},
          {"allowed_sockets", sockets}};
}

void print_host_ipc(const config::HostIpcConfig& c) {
  std::cout << "host sockets (a connection to one needs an approval unless listed):\n";
  const auto sockets = expanded_sockets(c);
  if (sockets.empty()) std::cout << "  hostIPC.allowedSockets: none\n";
  for (const auto& s : sockets)
    std::cout << "  hostIPC.allowedSockets: " << s.entry
              << (s.path ? (*s.path != s.entry ? " -> " + *s.path : std::string())
                         : std::string(" (allows nothing: unset variable or not absolute)"))
              << "\n";
  std::cout << "host IPC: hostIPC.mode " << config::to_string(c.mode)
            << (c.mode == config::HostIpcMode::Ask
                    ? " (a command may run on the host, outside the sandbox, after an exact "
                      "one-shot approval)"
                    : " (no command runs on the host)")
            << "\n"
            << "  hostIPC.preflightCommandPrefixes: " << listed(c.preflight_command_prefixes)
            << "\n"
            << "  hostIPC.retryOnUnixSocketError: "
            << (c.retry_on_unix_socket_error ? "true" : "false") << "\n";
}

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
  for (const auto& s : expanded_sockets(c))
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

json approval_json(const config::ApprovalConfig& c, const std::filesystem::path& audit) {
  return {{"reviewer", c.reviewer.empty() ? json(nullptr) : json(c.reviewer)},
          {"reviewer_timeout_seconds", c.reviewer_timeout_seconds},
          {"reviewer_retries", c.reviewer_retries},
          {"reviewer_failure_mode", config::to_string(c.reviewer_failure)},
          {"grant_ttl_seconds", c.grant_ttl_seconds},
          {"question_timeout_seconds", c.question_timeout_seconds},
          {"audit_log", audit.string()}};
}

void print_approval(const config::ApprovalConfig& c, const std::filesystem::path& audit) {
  std::string reviewer;
  for (const auto& word : c.reviewer) reviewer += (reviewer.empty() ? "" : " ") + word;
  std::cout << "approvals (hard denies, then the reviewer, then you on the terminal; "
               "docs/approvals.md):\n"
            << "  approval.reviewer: "
            << (reviewer.empty() ? "none (--reviewer PROGRAM sets one for a command)" : reviewer)
            << "\n"
            << "  approval.reviewerTimeoutSeconds: " << c.reviewer_timeout_seconds << "\n"
            << "  approval.reviewerRetries: " << c.reviewer_retries << "\n"
            << "  approval.reviewerFailureMode: " << config::to_string(c.reviewer_failure)
            << (c.reviewer_failure == config::ReviewerFailureMode::Defer
                    ? " (a review that fails asks you instead)"
                    : " (a review that fails denies)")
            << "\n"
            << "  approval.grantTtlSeconds: " << c.grant_ttl_seconds << "\n"
            << "  approval.questionTimeoutSeconds: " << c.question_timeout_seconds
            << (c.question_timeout_seconds == 0 ? " (no limit of its own: as long as the command)"
                                                : "")
            << "\n"
            << "  audit log: " << audit.string() << "\n";
}

json configuration_json(const config::LoadedConfig& loaded) {
  return {{"file", loaded.source ? json(loaded.source->string()) : json(nullptr)},
          {"subagents_provider", config::to_string(loaded.config->subagents.provider)},
          {"subagents_worker_extensions", loaded.config->subagents.worker_extensions}};
}

void print_configuration(const config::LoadedConfig& loaded) {
  std::cout << "configuration: "
            << (loaded.source ? loaded.source->string()
                              : "none found, the defaults (docs/configuration.md, \"Where\")")
            << "\n"
            << "  subagents.provider: " << config::to_string(loaded.config->subagents.provider)
            << "\n";
  if (!loaded.config->subagents.worker_extensions.empty()) {
    std::cout << "  subagents.workerExtensions:";
    for (const auto& path : loaded.config->subagents.worker_extensions) std::cout << " " << path;
    std::cout << "\n";
  }
}

/// What `pi-sandbox policy` was asked to print.
struct PolicyOutput {
  bool json = false;
  std::string platform = std::string(kHostPlatform);
  bool sbpl = false;  ///< the Seatbelt profile alone
};

/// What both platforms' reports show after their plans: the environment filter, the network,
/// host IPC and the approvals.
struct Rest {
  const config::Config& c;
  proxy::ParentProxies parents =
      proxy::parent_proxies_from_environment(session::caller_environment());
  std::filesystem::path audit = approval::default_audit_path(session::home_directory());

  void add_json(json& out) const {
    out["network"] = network_json(c.network, parents);
    out["host_ipc"] = host_ipc_json(c.host_ipc);
    out["environment"] = environment_json(c.environment);
    out["approval"] = approval_json(c.approval, audit);
  }

  void print() const {
    print_environment(c.environment);
    print_network(c.network, parents);
    print_host_ipc(c.host_ipc);
    print_approval(c.approval, audit);
  }
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
  const Rest rest{*loaded.config};
  if (as_json) {
    json out = {{"schema_version", kPolicySchemaVersion},
                {"configuration", configuration_json(loaded)}};
    out.update(policy_json(p, prot));
    out["plan"] = plan_json(*prepared);
    out["limits"] = limits_json(p, rest.c.limits, *prepared);
    rest.add_json(out);
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  print_configuration(loaded);
  print_paths(p, prot);
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
  const Rest rest{*loaded.config};
  if (output.json) {
    json out = {{"schema_version", kPolicySchemaVersion},
                {"platform", "macos"},
                {"configuration", configuration_json(loaded)}};
    out.update(policy_json(p, prot));
    out["seatbelt"] = seatbelt_json(p, prot, host_ipc);
    rest.add_json(out);
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  print_configuration(loaded);
  print_paths(p, prot);
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
