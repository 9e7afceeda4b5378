// The Seatbelt profile of a SandboxPolicy (seatbelt.hpp). Operation and filter names are those
// of Apple's sandbox profiles (`/System/Library/Sandbox/Profiles/*.sb`); docs/macos.md, "The
// profile" lists the rules in their order.
#include "sandbox/macos/seatbelt.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <system_error>

namespace pisandbox::sandbox::macos {

std::string sbpl_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (byte < 0x20 || byte == 0x7f) {
          std::array<char, 5> hex{};
          std::snprintf(hex.data(), hex.size(), "\\x%02x", byte);
          out += hex.data();
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

namespace {

constexpr std::string_view kRegexSpecial = "\\^.[$()|*+?{";

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char other_case(char c) {
  return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : static_cast<char>(c - 'A' + 'a');
}

enum class Case { Exact, Any };

std::string regex_of(std::string_view text, Case letters) {
  std::string out;
  for (const char c : text) {
    if (letters == Case::Any && is_ascii_letter(c)) {
      const char lower = c >= 'a' ? c : other_case(c);
      out += {'[', lower, other_case(lower), ']'};
    } else {
      if (kRegexSpecial.find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string regex_literal(std::string_view text) {
  return regex_of(text, Case::Exact);
}

std::string regex_literal_any_case(std::string_view text) {
  return regex_of(text, Case::Any);
}

bool host_path_exists(const fs::path& path) {
  std::error_code error;
  return fs::symlink_status(path, error).type() != fs::file_type::not_found && !error;
}

SeatbeltInputs example_inputs() {
  return {"/private/var/folders/pi-sandbox/tmp", "/private/var/folders/pi-sandbox/home", 3128,
          1080};
}

namespace {

Filter literal(const fs::path& path) {
  return {"literal", path.string()};
}
Filter subpath(const fs::path& path) {
  return {"subpath", path.string()};
}
Filter regex(std::string pattern) {
  return {"regex", std::move(pattern)};
}
Filter same_sandbox() {
  return {"target", "same-sandbox", Argument::Symbol};
}

// --- Processes, services, devices: what every command needs (docs/macos.md, "The profile"). ---

void add_processes(std::vector<Rule>& rules) {
  rules.push_back({Verdict::Allow, {"process-exec", "process-fork"}, {}, "run programs"});
  rules.push_back({Verdict::Allow,
                   {"process-info*", "signal", "mach-priv-task-port"},
                   {same_sandbox()},
                   "see and signal the command's own processes, never the host's"});
}

/// The mach services common tools look up: user and group names (opendirectoryd), notifications,
/// preferences, the system log, TLS trust evaluation (trustd, SecurityServer) and the per-user
/// temporary directory (dirhelper).
const std::vector<std::string_view>& mach_services() {
  static const std::vector<std::string_view> names = {
      "com.apple.system.opendirectoryd.libinfo",
      "com.apple.system.opendirectoryd.membership",
      "com.apple.system.DirectoryService.libinfo_v1",
      "com.apple.system.notification_center",
      "com.apple.system.logger",
      "com.apple.logd",
      "com.apple.cfprefsd.daemon",
      "com.apple.cfprefsd.agent",
      "com.apple.SecurityServer",
      "com.apple.trustd",
      "com.apple.trustd.agent",
      "com.apple.ocspd",
      "com.apple.bsd.dirhelper",
      "com.apple.coreservices.launchservicesd",
      "com.apple.lsd.mapdb",
      "com.apple.FSEvents",
  };
  return names;
}

/// The sysctls common tools read: the machine (`hw.`), the processor (`machdep.cpu.`), the
/// kernel's names and limits, and the calling process's own entry (`kern.proc.pid.`).
void add_sysctls(std::vector<Rule>& rules) {
  std::vector<Filter> filters;
  for (const auto* prefix : {"hw.", "machdep.cpu.", "kern.proc.pid."})
    filters.push_back({"sysctl-name-prefix", prefix});
  for (const auto* name : {"kern.argmax",           "kern.bootargs",
                           "kern.boottime",         "kern.hostname",
                           "kern.maxfiles",         "kern.maxfilesperproc",
                           "kern.maxproc",          "kern.ngroups",
                           "kern.osproductversion", "kern.osrelease",
                           "kern.ostype",           "kern.osversion",
                           "kern.secure_kernel",    "kern.usrstack64",
                           "kern.version",          "sysctl.proc_cputype",
                           "sysctl.proc_native",    "vm.loadavg",
                           "vm.pagesize",           "security.mac.lockdown_mode_state"})
    filters.push_back({"sysctl-name", name});
  rules.push_back({Verdict::Allow, {"sysctl-read"}, std::move(filters), "machine facts"});
}

void add_services(std::vector<Rule>& rules) {
  std::vector<Filter> services;
  for (auto name : mach_services()) services.push_back({"global-name", std::string(name)});
  rules.push_back({Verdict::Allow, {"mach-lookup"}, std::move(services), "system services"});
  rules.push_back({Verdict::Allow,
                   {"ipc-posix-shm", "ipc-posix-sem", "user-preference-read"},
                   {},
                   "POSIX shared memory and semaphores (Python's multiprocessing), preferences"});
  add_sysctls(rules);
}

/// The device files a command writes (the Linux sandbox's private /dev: docs/security.md,
/// "Device nodes") and the terminal.
void add_devices(std::vector<Rule>& rules) {
  std::vector<Filter> devices;
  for (const auto* dev : {"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper", "/dev/stdout",
                          "/dev/stderr", "/dev/random", "/dev/urandom"})
    devices.push_back(literal(dev));
  rules.push_back({Verdict::Allow,
                   {"file-write-data", "file-ioctl"},
                   std::move(devices),
                   "device files every command writes"});
  rules.push_back({Verdict::Allow, {"pseudo-tty"}, {}, "a terminal for the command"});
  rules.push_back({Verdict::Allow,
                   {"file-read*", "file-write-data", "file-ioctl"},
                   {regex("^/dev/ttys[0-9]+$"), literal("/dev/ptmx"), regex("^/dev/fd/[0-9]+$")},
                   "the terminal's devices and the command's own descriptors"});
}

// --- The filesystem (docs/macos.md, "The profile"; docs/security.md). ---

/// The directories from the home down to, not including, `path` (a path inside the home).
std::vector<fs::path> ancestors_below(const fs::path& path, const fs::path& top) {
  std::vector<fs::path> out;
  for (fs::path p = path.parent_path(); policy::is_within(p, top); p = p.parent_path()) {
    out.push_back(p);
    if (p == top || p == p.parent_path()) break;
  }
  std::ranges::reverse(out);
  return out;
}

void add_hidden_home(std::vector<Rule>& rules, const policy::SandboxPolicy& policy) {
  rules.push_back({Verdict::Deny,
                   {"file-read*"},
                   {subpath(policy.home)},
                   "the home is hidden (compatibility C15)"});
  // The directories down to a re-exposed path must be looked up (their metadata), not listed.
  std::set<fs::path> walk = {policy.home};
  std::vector<Filter> exposed;
  for (const auto& e : policy.home_read_allowed) {
    for (const auto& a : ancestors_below(e.path, policy.home)) walk.insert(a);
    exposed.push_back(subpath(e.path));
  }
  for (const auto& e : policy.writable)
    if (policy::is_within(e.path, policy.home)) {
      for (const auto& a : ancestors_below(e.path, policy.home)) walk.insert(a);
      exposed.push_back(subpath(e.path));
    }
  std::vector<Filter> metadata;
  for (const auto& p : walk) metadata.push_back(literal(p));
  rules.push_back({Verdict::Allow,
                   {"file-read-metadata"},
                   std::move(metadata),
                   "the way to the re-exposed paths"});
  if (!exposed.empty())
    rules.push_back({Verdict::Allow,
                     {"file-read*"},
                     std::move(exposed),
                     "re-exposed in the hidden home (~/.gitconfig, toolchains, configured reads)"});
}

void add_reads(std::vector<Rule>& rules, const policy::SandboxPolicy& policy) {
  rules.push_back({Verdict::Allow, {"file-read*"}, {}, "the host is readable"});
  if (policy.hide_home) add_hidden_home(rules, policy);
  if (!policy.private_tmp) return;
  // The Linux sandbox's /tmp and /var/tmp are private and empty (compatibility C24): the host's
  // are not read here either (on macOS /tmp and /var/tmp are links into /private).
  rules.push_back({Verdict::Deny,
                   {"file-read*"},
                   {regex("^/private/tmp/"), regex("^/private/var/tmp/")},
                   "the host's temporary files are not the command's"});
}

void add_concealed(std::vector<Rule>& rules, const policy::SandboxPolicy& policy) {
  std::vector<Filter> concealed;
  for (const auto& path : policy.concealed) concealed.push_back(subpath(path));
  // Seatbelt cannot show a copy without the credentials (docs/macos.md): the files that were
  // masked whole before there were copies (npm's and Docker's) stay denied where the command
  // could read them; the others stay as they were, readable (a denied ~/.cargo/config.toml
  // would stop cargo).
  const auto readable = [&](const std::filesystem::path& path) {
    return policy::is_within(path, policy.workspace) ||
           std::ranges::any_of(policy.home_read_allowed, [&](const policy::Exposure& e) {
             return policy::is_within(path, e.path);
           });
  };
  for (const auto& copy : policy.sanitized) {
    const bool masked_before = copy.format == policy::ConfigFormat::Npmrc ||
                               copy.format == policy::ConfigFormat::DockerConfig;
    if (masked_before && readable(copy.path)) concealed.push_back(subpath(copy.path));
  }
  if (concealed.empty()) return;
  rules.push_back({Verdict::Deny,
                   {"file-read*", "file-write*"},
                   std::move(concealed),
                   "credentials inside re-exposed directories"});
}

/// The workspace is or contains the home (docs/security.md, "The workspace is the home"):
/// nothing can be made at the home's top level, no dot-entry changed, but its ordinary
/// directories stay writable.
void add_read_only_home(std::vector<Rule>& rules, const policy::SandboxPolicy& policy) {
  const std::string home = regex_literal(policy.home.string());
  rules.push_back(
      {Verdict::Deny,
       {"file-write*"},
       {literal(policy.home), regex("^" + home + "/[^/]+$"), regex("^" + home + "/\\.")},
       "the home's top level and its dot-entries are read-only"});
  if (policy.home_writable_entries.empty()) return;
  std::vector<Filter> entries;
  for (const auto& path : policy.home_writable_entries) entries.push_back(subpath(path));
  rules.push_back({Verdict::Allow,
                   {"file-write*"},
                   std::move(entries),
                   "the home's ordinary directories stay writable"});
}

void add_writes(std::vector<Rule>& rules, const policy::SandboxPolicy& policy,
                const SeatbeltInputs& inputs) {
  std::vector<Filter> writable;
  for (const auto& e : policy.writable)
    if (e.access == policy::Access::ReadWrite) writable.push_back(subpath(e.path));
  writable.push_back(subpath(inputs.temp_dir));
  if (policy.hide_home) writable.push_back(subpath(inputs.home_layer));
  rules.push_back({Verdict::Allow,
                   {"file-read*", "file-write*"},
                   std::move(writable),
                   "the workspace, the command's private temporary directory and home layer"});
  if (policy.home_read_only) add_read_only_home(rules, policy);
}

/// The writable root `path` lies in, or empty when it lies in none.
fs::path writable_root(const fs::path& path, const policy::SandboxPolicy& policy) {
  fs::path best;
  for (const auto& e : policy.writable)
    if (policy::is_within(path, e.path) && e.path.string().size() > best.string().size())
      best = e.path;
  return best;
}

/// Whether `item` is protected even while it does not exist: the Linux sandbox's placeholder or
/// guard (with the guard, a missing secret is not protected: docs/security.md, "The guard").
bool protected_when_missing(const policy::ProtectedPath& item, policy::Protection protection) {
  return item.create_if_missing &&
         !(protection == policy::Protection::Guard && item.reason == policy::ProtectReason::Secret);
}

/// `^<root>/<name, any case>(/.*)?$`: `path` and everything beneath it, whatever the case of the
/// part below `root`.
std::string path_regex(const fs::path& path, const fs::path& root) {
  const std::string below = path.lexically_relative(root).string();
  return "^" + regex_literal(root.string()) + "/" + regex_literal_any_case(below) + "(/.*)?$";
}

/// `^<root>/(.*/)?<name, any case>(/.*)?$`: the name at any depth beneath `root`, so that a name
/// created later is refused too (docs/macos.md, "The profile").
std::string name_regex(std::string_view name, const fs::path& root) {
  return "^" + regex_literal(root.string()) + "/(.*/)?" + regex_literal_any_case(name) + "(/.*)?$";
}

/// `.gitmodules`: the Linux guard checks what a command adds to it against the allowlist of
/// gitmodules(5) keys (docs/security.md, "The git configuration guard"); Seatbelt has no content
/// guard, so on macOS it stays read-only wherever the names host programs run are (docs/macos.md).
constexpr std::string_view kGitmodules = ".gitmodules";

/// The names the Linux sandbox protects wherever it finds them in the workspace: the names host
/// programs run (policy::host_program_names(), but Pi's own and the patterns), `.gitmodules` and
/// `.git/hooks` (compatibility C25, C26).
std::vector<std::string_view> names_anywhere() {
  std::vector<std::string_view> names;
  for (const auto& row : policy::host_program_names())
    if (row.reason == policy::ProtectReason::DangerousFile && !policy::is_name_pattern(row.name))
      names.push_back(row.name);
  names.push_back(kGitmodules);
  names.push_back(".git/hooks");
  return names;
}

/// `^<dir>/(.*/)?[^/]*<suffix, any case>(/.*)?$`: an entry named by `pattern` (`*<suffix>`) at
/// any depth beneath `dir`, and what lies below it.
std::string pattern_regex(std::string_view pattern, const fs::path& dir) {
  return "^" + regex_literal(dir.string()) + "/(.*/)?[^/]*" +
         regex_literal_any_case(pattern.substr(1)) + "(/.*)?$";
}

void add_protected(std::vector<Rule>& rules, const policy::SandboxPolicy& policy,
                   const std::vector<policy::ProtectedPath>& protected_paths,
                   const PathExists& exists) {
  std::vector<Filter> paths;
  std::set<fs::path> ancestors;
  for (const auto& item : protected_paths) {
    if (!protected_when_missing(item, policy.protection) && !exists(item.path)) continue;
    const fs::path root = writable_root(item.path, policy);
    paths.push_back(item.kind == policy::NodeKind::Directory ? subpath(item.path)
                                                             : literal(item.path));
    if (root.empty()) continue;  // read-only already; nothing to rename it in
    if (protected_when_missing(item, policy.protection) && item.path != root)
      paths.push_back(regex(path_regex(item.path, root)));
    for (fs::path p = item.path.parent_path(); policy::is_within(p, root); p = p.parent_path()) {
      ancestors.insert(p);
      if (p == root) break;
    }
  }
  std::vector<fs::path> roots{policy.workspace};
  for (const auto& e : policy.writable)
    if (e.origin == policy::Origin::ConfiguredWrite) roots.push_back(e.path);
  for (const auto& root : roots) {
    paths.push_back(literal(root / kGitmodules));
    paths.push_back(regex(path_regex(root / kGitmodules, root)));
  }
  for (auto name : names_anywhere()) paths.push_back(regex(name_regex(name, policy.workspace)));
  for (const auto& pattern : policy.protected_patterns)
    paths.push_back(regex(pattern_regex(pattern.pattern, pattern.dir)));
  rules.push_back({Verdict::Deny,
                   {"file-write*"},
                   std::move(paths),
                   "protected paths, and protected names created later"});
  std::vector<Filter> parents;
  for (const auto& p : ancestors) parents.push_back(literal(p));
  if (!parents.empty())
    rules.push_back({Verdict::Deny,
                     {"file-write-unlink"},
                     std::move(parents),
                     "the parents of protected paths cannot be renamed or removed"});
}

// --- The network (docs/macos.md, "The proxy on the host's loopback"; docs/security.md, "Unix
// sockets"). ---

void add_network(std::vector<Rule>& rules, const policy::SandboxPolicy& policy,
                 const SeatbeltInputs& inputs) {
  std::vector<Filter> proxy;
  for (const auto port : {inputs.http_port, inputs.socks_port})
    proxy.push_back({"remote ip", "localhost:" + std::to_string(port)});
  rules.push_back({Verdict::Allow,
                   {"network-outbound"},
                   std::move(proxy),
                   "the command's proxy (HTTP, SOCKS5) on the host's loopback"});
  // The sandbox's own sockets: bound where it writes, connected where no host process can have
  // made one (its temporary directory and home layer are its own).
  std::vector<Filter> own;
  std::vector<Filter> bound;
  const auto under = [](const fs::path& dir) {
    return Filter{"path-regex", "^" + regex_literal(dir.string()) + "/", Argument::String,
                  "local unix-socket"};
  };
  for (const auto& e : policy.writable)
    if (e.access == policy::Access::ReadWrite) bound.push_back(under(e.path));
  for (const auto& dir : {inputs.temp_dir, inputs.home_layer}) {
    if (dir == inputs.home_layer && !policy.hide_home) continue;
    bound.push_back(under(dir));
    own.push_back({"path-regex", "^" + regex_literal(dir.string()) + "/", Argument::String,
                   "remote unix-socket"});
  }
  rules.push_back({Verdict::Allow,
                   {"network-bind", "network-inbound"},
                   std::move(bound),
                   "Unix sockets the command binds where it writes"});
  for (const auto& path : inputs.allowed_sockets)
    own.push_back({"path-literal", path.string(), Argument::String, "remote unix-socket"});
  rules.push_back({Verdict::Allow,
                   {"network-outbound"},
                   std::move(own),
                   "the command's own Unix sockets and hostIPC.allowedSockets"});
}

}  // namespace

SeatbeltProfile plan_seatbelt(const policy::SandboxPolicy& policy,
                              const std::vector<policy::ProtectedPath>& protected_paths,
                              const SeatbeltInputs& inputs, const PathExists& exists) {
  SeatbeltProfile profile;
  auto& rules = profile.rules;
  add_processes(rules);
  add_services(rules);
  add_devices(rules);
  add_reads(rules, policy);
  add_writes(rules, policy, inputs);
  add_concealed(rules, policy);
  // After every allow of a write: a protected path inside the workspace stays refused.
  add_protected(rules, policy, protected_paths, exists);
  add_network(rules, policy, inputs);
  return profile;
}

namespace {

std::string render(const Filter& filter) {
  std::string inner = "(" + filter.head;
  if (filter.argument == Argument::String) inner += " " + sbpl_string(filter.value);
  if (filter.argument == Argument::Symbol) inner += " " + filter.value;
  inner += ")";
  return filter.wrapper.empty() ? inner : "(" + filter.wrapper + " " + inner + ")";
}

}  // namespace

std::string render(const SeatbeltProfile& profile) {
  std::string out = "(version 1)\n(deny default)\n";
  for (const auto& rule : profile.rules) {
    if (!rule.why.empty()) out += "; " + rule.why + "\n";
    out += rule.verdict == Verdict::Allow ? "(allow" : "(deny";
    for (const auto& op : rule.operations) out += " " + op;
    for (const auto& filter : rule.filters) out += "\n  " + render(filter);
    out += ")\n";
  }
  return out;
}

}  // namespace pisandbox::sandbox::macos
