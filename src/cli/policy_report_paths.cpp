// `pi-sandbox policy`: the policy's own paths, as text and as `--json` (policy_report.hpp):
// the workspace and the home, what is re-exposed, writable, concealed, handed in and sanitized,
// the workspace's outward links, and the protected paths.
#include <fcntl.h>

#include <cstring>
#include <iostream>

#include "cli/policy_report.hpp"
#include "core/unique_fd.hpp"
#include "policy/credential_lines.hpp"
#include "policy/host_environment.hpp"
#include "policy/workspace_links.hpp"
#include "session/approval_setup.hpp"
#include "session/host_programs.hpp"

namespace pisandbox::cli::policy_report {

namespace {

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

}  // namespace

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

}  // namespace pisandbox::cli::policy_report
