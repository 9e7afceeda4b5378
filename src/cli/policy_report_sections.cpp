// `pi-sandbox policy`: the sections of the configuration that both platforms' reports show,
// as text and as `--json` (policy_report.hpp): the environment filter, the network, host IPC,
// the approvals, and the configuration file.
#include <iostream>

#include "cli/policy_report.hpp"
#include "policy/environment.hpp"

namespace pisandbox::cli::policy_report {

namespace {

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

json host_ipc_json(const config::HostIpcConfig& c) {
  json sockets = json::array();
  for (const auto& s : expanded_sockets(c))
    sockets.push_back({{"entry", s.entry}, {"path", s.path ? json(*s.path) : json(nullptr)}});
  return {{"mode", config::to_string(c.mode)},
          {"preflight_command_prefixes", c.preflight_command_prefixes},
          {"retry_on_unix_socket_error", c.retry_on_unix_socket_error},
          {"allowed_sockets", sockets}};
}

/// What `policy` says after an allowedSockets entry: its expansion, and why it allows nothing.
std::string socket_entry_note(const policy::AllowedSocket& s,
                              const std::vector<policy::WritableArea>& writable) {
  if (!s.path) return " (allows nothing: unset variable or not absolute)";
  std::string note = *s.path != s.entry ? " -> " + *s.path : std::string();
  if (policy::in_writable_area(*s.path, writable))
    note +=
        " (allows nothing: the command can write there, and could put another socket at that "
        "name)";
  return note;
}

void print_host_ipc(const config::HostIpcConfig& c,
                    const std::vector<policy::WritableArea>& writable) {
  std::cout << "host sockets (a connection to one needs an approval unless listed):\n";
  const auto sockets = expanded_sockets(c);
  if (sockets.empty()) std::cout << "  hostIPC.allowedSockets: none\n";
  for (const auto& s : sockets)
    std::cout << "  hostIPC.allowedSockets: " << s.entry << socket_entry_note(s, writable) << "\n";
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

}  // namespace

std::vector<policy::AllowedSocket> expanded_sockets(const config::HostIpcConfig& c) {
  return policy::allowed_sockets(c.allowed_sockets, session::caller_environment(),
                                 session::home_directory().string());
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

void Rest::add_json(json& out) const {
  out["network"] = network_json(c.network, parents);
  out["host_ipc"] = host_ipc_json(c.host_ipc);
  out["environment"] = environment_json(c.environment);
  out["approval"] = approval_json(c.approval, audit);
}

void Rest::print() const {
  print_environment(c.environment);
  print_network(c.network, parents);
  print_host_ipc(c.host_ipc, writable);
  print_approval(c.approval, audit);
}

}  // namespace pisandbox::cli::policy_report
