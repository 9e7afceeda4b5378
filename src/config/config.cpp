#include "config/config.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <span>
#include <utility>

#include "config/config_document.hpp"
#include "core/printable.hpp"
#include "policy/sandbox_policy.hpp"

namespace pisandbox::config {
namespace {

using namespace detail;

// ---------------------------------------------------------------------------------------
// Document -> Config. Sections and fields are checked in schema order (as the
// replaced extension did, compatibility C4), and the first error is returned.
std::expected<SubagentsConfig, ConfigError> parse_subagents(const Document& document) {
  static constexpr std::array<std::string_view, 3> kKeys = {"provider", "workerExtensions",
                                                            "externalWorkerIsolation"};
  SubagentsConfig out;
  auto object = section(document, "subagents", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* provider = member(**object, "provider")) {
    static constexpr std::array kProviders = {SubagentProvider::Builtin,
                                              SubagentProvider::PiSubagents, SubagentProvider::Off};
    const auto found = spelled(*provider, kProviders);
    if (!found) return invalid("subagents.provider must be one of builtin, pi-subagents, off");
    out.provider = *found;
  }
  if (const Json* paths = member(**object, "workerExtensions")) {
    if (!paths->is_array() || !std::ranges::all_of(*paths, is_absolute_path)) {
      return invalid("subagents.workerExtensions must be an array of absolute paths");
    }
    for (const Json& path : *paths) append_unique(out.worker_extensions, path.get<std::string>());
  }
  if (const Json* isolation = member(**object, "externalWorkerIsolation")) {
    static constexpr std::array kIsolations = {ExternalWorkerIsolation::Off,
                                               ExternalWorkerIsolation::Enforce};
    const auto found = spelled(*isolation, kIsolations);
    if (!found) return invalid("subagents.externalWorkerIsolation must be off or enforce");
    out.external_worker_isolation = *found;
  }
  return out;
}

std::expected<PiConfig, ConfigError> parse_pi(const Document& document) {
  static constexpr std::array<std::string_view, 1> kKeys = {"fileTools"};
  PiConfig out;
  auto object = section(document, "pi", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* file_tools = member(**object, "fileTools")) {
    static constexpr std::array kModes = {PiFileTools::Sandboxed, PiFileTools::Host};
    const auto found = spelled(*file_tools, kModes);
    if (!found) return invalid("pi.fileTools must be one of sandboxed, host");
    out.file_tools = *found;
  }
  return out;
}

/// `filesystem.exposeCredentials`: `~/` and a credential of the table (docs/security.md,
/// "Handing a credential in"), returned without the `~/`.
std::expected<std::vector<std::string>, ConfigError> parse_expose_credentials(
    const Json& credentials) {
  if (!credentials.is_array() || !std::ranges::all_of(credentials, &Json::is_string))
    return invalid("filesystem.exposeCredentials must be an array of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < credentials.size(); ++i) {
    const auto& entry = credentials[i].get_ref<const std::string&>();
    const std::string_view name = std::string_view(entry).substr(entry.starts_with("~/") ? 2 : 0);
    if (!entry.starts_with("~/") || !policy::is_credential_name(name))
      return invalid("filesystem.exposeCredentials[" + std::to_string(i) +
                     "] must be ~/ followed by a credential of the table in docs/security.md, "
                     "\"Credentials\" (a row, or a file under a directory row): " +
                     core::printable(entry));
    append_unique(out, std::string(name));
  }
  return out;
}

std::expected<FilesystemConfig, ConfigError> parse_filesystem(const Document& document) {
  static constexpr std::array<std::string_view, 5> kKeys = {
      "additionalAllowRead", "additionalAllowWrite", "exposeHomeToolchains", "protection",
      "exposeCredentials"};
  FilesystemConfig out;
  auto object = section(document, "filesystem", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* paths = member(**object, "additionalAllowRead")) {
    if (!paths->is_array() || !std::ranges::all_of(*paths, is_absolute_path)) {
      return invalid("filesystem.additionalAllowRead must be an array of absolute paths");
    }
    for (const Json& path : *paths) {
      append_unique(out.additional_allow_read, path.get<std::string>());
    }
  }
  if (const Json* paths = member(**object, "additionalAllowWrite")) {
    if (!paths->is_array() || !std::ranges::all_of(*paths, is_absolute_path)) {
      return invalid("filesystem.additionalAllowWrite must be an array of absolute paths");
    }
    for (const Json& path : *paths) {
      append_unique(out.additional_allow_write, path.get<std::string>());
    }
  }
  if (const Json* expose = member(**object, "exposeHomeToolchains")) {
    if (!expose->is_boolean()) {
      return invalid("filesystem.exposeHomeToolchains must be a boolean");
    }
    out.expose_home_toolchains = expose->get<bool>();
  }
  if (const Json* protection = member(**object, "protection")) {
    if (!protection->is_string() || (*protection != "guard" && *protection != "strict")) {
      return invalid("filesystem.protection must be one of guard, strict");
    }
    out.strict_protection = *protection == "strict";
  }
  if (const Json* credentials = member(**object, "exposeCredentials")) {
    auto names = parse_expose_credentials(*credentials);
    if (!names) return Failure(std::move(names.error()));
    out.expose_credentials = std::move(*names);
  }
  return out;
}

/// `hostIPC.allowedSockets`: an array of paths a socket may be named by (docs/configuration.md).
std::expected<std::vector<std::string>, ConfigError> parse_allowed_sockets(const Json& sockets) {
  const auto non_blank = [](const Json& v) {
    return v.is_string() && !js_trim(v.get_ref<const std::string&>()).empty();
  };
  if (!sockets.is_array() || !std::ranges::all_of(sockets, non_blank))
    return invalid("hostIPC.allowedSockets must be an array of non-empty strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < sockets.size(); ++i) {
    const std::string entry = js_trim(sockets[i].get_ref<const std::string&>());
    if (!entry.starts_with('/') && !entry.starts_with("~/") && !entry.starts_with('$'))
      return invalid(
          "hostIPC.allowedSockets[" + std::to_string(i) +
          "] must be an absolute path, ~/..., or start with $VARIABLE: " + core::printable(entry));
    append_unique(out, entry);
  }
  return out;
}

std::expected<HostIpcConfig, ConfigError> parse_host_ipc(const Document& document) {
  static constexpr std::array<std::string_view, 4> kKeys = {
      "mode", "preflightCommandPrefixes", "retryOnUnixSocketError", "allowedSockets"};
  HostIpcConfig out;
  auto object = section(document, "hostIPC", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* mode = member(**object, "mode")) {
    if (*mode == "off") {
      out.mode = HostIpcMode::Off;
    } else if (*mode == "ask") {
      out.mode = HostIpcMode::Ask;
    } else {
      return invalid("hostIPC.mode must be one of off, ask");
    }
  }
  if (const Json* prefixes = member(**object, "preflightCommandPrefixes")) {
    const auto non_blank = [](const Json& v) {
      return v.is_string() && !js_trim(v.get_ref<const std::string&>()).empty();
    };
    if (!prefixes->is_array() || !std::ranges::all_of(*prefixes, non_blank)) {
      return invalid("hostIPC.preflightCommandPrefixes must be an array of non-empty strings");
    }
    for (const Json& prefix : *prefixes) {
      append_unique(out.preflight_command_prefixes, js_trim(prefix.get_ref<const std::string&>()));
    }
  }
  if (const Json* retry = member(**object, "retryOnUnixSocketError")) {
    if (!retry->is_boolean()) return invalid("hostIPC.retryOnUnixSocketError must be a boolean");
    out.retry_on_unix_socket_error = retry->get<bool>();
  }
  if (const Json* sockets = member(**object, "allowedSockets")) {
    if (auto parsed = parse_allowed_sockets(*sockets); parsed)
      out.allowed_sockets = std::move(*parsed);
    else
      return Failure(std::move(parsed.error()));
  }
  return out;
}

// `network.<key>`: first the shape of the whole array (compatibility C12), then each entry.
std::expected<std::vector<policy::DomainPattern>, ConfigError> parse_domains(
    const Json& entries, std::string_view key, policy::ListKind list) {
  const std::string name = "network." + std::string(key);
  const auto non_blank = [](const Json& v) {
    return v.is_string() && !js_trim(v.get_ref<const std::string&>()).empty();
  };
  if (!entries.is_array() || !std::ranges::all_of(entries, non_blank)) {
    return invalid(name + " must be an array of non-empty strings");
  }
  std::vector<policy::DomainPattern> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i].get_ref<const std::string&>();
    auto pattern = policy::DomainPattern::parse(entry, list);
    if (!pattern) {
      return invalid(name + "[" + std::to_string(i) +
                         "] contains an invalid domain pattern: " + core::printable(entry),
                     "the entry " + pattern.error() +
                         "; a domain pattern is example.com or *.example.com (strict subdomains), "
                         "optionally with :port" +
                         (list == policy::ListKind::Denied ? ", or * / *:port" : ""));
    }
    append_unique(out, std::move(*pattern));
  }
  return out;
}

constexpr std::size_t kMaxReasonLength = 200;  // characters (code points), after trimming

// A reason shown in a refusal line: no control characters, line separators or bidirectional
// controls (one line that reads as written; core/printable.hpp lists the same controls).
bool is_reason_text(std::string_view text) {
  const std::u32string code_points = [&] {
    std::u32string out;
    for (std::size_t i = 0; i < text.size();) {
      const auto byte = static_cast<unsigned char>(text[i]);
      const std::size_t length = byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4;
      out.push_back(decode(text.substr(i), length));
      i += length;
    }
    return out;
  }();
  if (code_points.empty() || code_points.size() > kMaxReasonLength) return false;
  return std::ranges::none_of(code_points, [](char32_t c) {
    const bool direction = c == 0x061C || c == 0x200E || c == 0x200F ||
                           (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
    return c < 0x20 || (c >= 0x7F && c < 0xA0) || c == 0x2028 || c == 0x2029 || direction ||
           c == 0xFFFFFFFF;
  });
}

// `network.deniedDomainReasons` (docs/configuration.md): every key a deniedDomains entry (after
// the same canonicalisation), every value a one-line reason.
std::expected<std::map<std::string, std::string, std::less<>>, ConfigError> parse_denied_reasons(
    const Json& reasons, const std::vector<policy::DomainPattern>& denied) {
  const std::string name = "network.deniedDomainReasons";
  if (!reasons.is_object())
    return invalid(name + " must be an object mapping network.deniedDomains entries to reasons");
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [key, value] : reasons.items()) {
    auto pattern = policy::DomainPattern::parse(key, policy::ListKind::Denied);
    const bool listed = pattern && std::ranges::find(denied, *pattern) != denied.end();
    if (!listed)
      return invalid(name + " key " + core::printable(key) +
                     " is not an entry of network.deniedDomains");
    const std::string reason =
        value.is_string() ? js_trim(value.get_ref<const std::string&>()) : "";
    if (!is_reason_text(reason))
      return invalid(name + "." + core::printable(key) + " must be a non-empty string of at most " +
                     std::to_string(kMaxReasonLength) + " characters without control characters");
    out.emplace(pattern->text(), reason);
  }
  return out;
}

std::expected<NetworkConfig, ConfigError> parse_network(const Document& document) {
  static constexpr std::array<std::string_view, 3> kKeys = {"allowedDomains", "deniedDomains",
                                                            "deniedDomainReasons"};
  NetworkConfig out;
  auto object = section(document, "network", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* allowed = member(**object, "allowedDomains")) {
    auto patterns = parse_domains(*allowed, "allowedDomains", policy::ListKind::Allowed);
    if (!patterns) return Failure(std::move(patterns.error()));
    out.allowed_domains = std::move(*patterns);
  }
  if (const Json* denied = member(**object, "deniedDomains")) {
    auto patterns = parse_domains(*denied, "deniedDomains", policy::ListKind::Denied);
    if (!patterns) return Failure(std::move(patterns.error()));
    out.denied_domains = std::move(*patterns);
  }
  if (const Json* reasons = member(**object, "deniedDomainReasons")) {
    auto parsed = parse_denied_reasons(*reasons, out.denied_domains);
    if (!parsed) return Failure(std::move(parsed.error()));
    out.denied_domain_reasons = std::move(*parsed);
  }
  return out;
}

// An integer literal in [min, max]: no fraction or exponent, no boolean, no string.
std::optional<int> bounded_integer(const Json& value, int max, int min = 1) {
  if (!value.is_number_unsigned()) return std::nullopt;  // negative integers are signed
  const auto number = value.get<std::uint64_t>();
  if (number < static_cast<std::uint64_t>(min) || number > static_cast<std::uint64_t>(max))
    return std::nullopt;
  return static_cast<int>(number);
}

std::expected<ApprovalConfig, ConfigError> parse_approval(const Document& document) {
  static constexpr std::array<std::string_view, 6> kKeys = {
      "reviewer",        "reviewerTimeoutSeconds", "reviewerRetries", "reviewerFailureMode",
      "grantTtlSeconds", "questionTimeoutSeconds"};
  ApprovalConfig out;
  auto object = section(document, "approval", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* reviewer = member(**object, "reviewer")) {
    // argv for execve(2): strings without NUL, the program named by an absolute path.
    const auto argument = [](const Json& v) {
      return v.is_string() && v.get_ref<const std::string&>().find('\0') == std::string::npos;
    };
    if (!reviewer->is_array() || reviewer->empty() || !std::ranges::all_of(*reviewer, argument) ||
        !is_absolute_path(reviewer->front())) {
      return invalid(
          "approval.reviewer must be an array of strings starting with an absolute path");
    }
    for (const Json& arg : *reviewer) out.reviewer.push_back(arg.get<std::string>());
  }
  if (const Json* timeout = member(**object, "reviewerTimeoutSeconds")) {
    const auto seconds = bounded_integer(*timeout, kMaxReviewerTimeoutSeconds);
    if (!seconds) {
      return invalid("approval.reviewerTimeoutSeconds must be an integer between 1 and " +
                     std::to_string(kMaxReviewerTimeoutSeconds));
    }
    out.reviewer_timeout_seconds = *seconds;
  }
  if (const Json* retries = member(**object, "reviewerRetries")) {
    const auto count = bounded_integer(*retries, kMaxReviewerRetries, 0);
    if (!count) {
      return invalid("approval.reviewerRetries must be an integer between 0 and " +
                     std::to_string(kMaxReviewerRetries));
    }
    out.reviewer_retries = *count;
  }
  if (const Json* mode = member(**object, "reviewerFailureMode")) {
    if (*mode == "deny") {
      out.reviewer_failure = ReviewerFailureMode::Deny;
    } else if (*mode == "defer") {
      out.reviewer_failure = ReviewerFailureMode::Defer;
    } else {
      return invalid("approval.reviewerFailureMode must be one of deny, defer");
    }
  }
  if (const Json* ttl = member(**object, "grantTtlSeconds")) {
    const auto seconds = bounded_integer(*ttl, kMaxGrantTtlSeconds);
    if (!seconds) {
      return invalid("approval.grantTtlSeconds must be an integer between 1 and " +
                     std::to_string(kMaxGrantTtlSeconds));
    }
    out.grant_ttl_seconds = *seconds;
  }
  if (const Json* question = member(**object, "questionTimeoutSeconds")) {
    const auto seconds = bounded_integer(*question, kMaxQuestionTimeoutSeconds, 0);
    if (!seconds) {
      return invalid("approval.questionTimeoutSeconds must be an integer between 0 and " +
                     std::to_string(kMaxQuestionTimeoutSeconds));
    }
    out.question_timeout_seconds = *seconds;
  }
  return out;
}

// A value as the messages show it: its JSON text, control characters escaped, at most 64
// bytes of it.
std::string shown(const Json& value) {
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 64) text = text.substr(0, 61) + "...";
  return core::printable(text);
}

// A size: a whole number of bytes (at least policy::kMinSizeBytes), or "N%" of the machine's
// memory with N from 1 to 100.
std::optional<policy::SizeLimit> size_limit(const Json& value) {
  if (value.is_number_unsigned()) {
    const auto bytes = value.get<std::uint64_t>();
    if (bytes < policy::kMinSizeBytes || bytes > policy::kMaxSizeBytes) return std::nullopt;
    return policy::SizeLimit{policy::SizeLimit::Unit::Bytes, bytes};
  }
  if (!value.is_string()) return std::nullopt;
  const auto& text = value.get_ref<const std::string&>();
  if (text.size() < 2 || text.size() > 4 || text.back() != '%' || text.front() == '0')
    return std::nullopt;
  const std::string_view digits(text.data(), text.size() - 1);
  if (!std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto percent = std::stoul(std::string(digits));
  if (percent < 1 || percent > 100) return std::nullopt;
  return policy::SizeLimit{policy::SizeLimit::Unit::Percent, percent};
}

std::expected<policy::LimitsSpec, ConfigError> parse_limits(const Document& document) {
  static constexpr std::array<std::string_view, 4> kKeys = {"maxProcesses", "memory", "tmpfs",
                                                            "cpu"};
  policy::LimitsSpec out;
  auto object = section(document, "limits", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  if (const Json* processes = member(**object, "maxProcesses")) {
    const auto count = processes->is_number_unsigned() ? processes->get<std::uint64_t>() : 0;
    if (count < policy::kMinMaxProcesses || count > policy::kMaxMaxProcesses)
      return invalid("limits.maxProcesses must be an integer between " +
                     std::to_string(policy::kMinMaxProcesses) + " and " +
                     std::to_string(policy::kMaxMaxProcesses) + ", got " + shown(*processes));
    out.max_processes = count;
  }
  for (const auto& [key, target] :
       {std::pair{"memory", &out.memory}, std::pair{"tmpfs", &out.tmpfs}}) {
    const Json* value = member(**object, key);
    if (value == nullptr) continue;
    const auto size = size_limit(*value);
    if (!size)
      return invalid(std::string("limits.") + key + " must be a number of bytes (from " +
                     std::to_string(policy::kMinSizeBytes) + " to " +
                     std::to_string(policy::kMaxSizeBytes) +
                     ") or a percentage of the machine's memory from \"1%\" to \"100%\", got " +
                     shown(*value));
    *target = *size;
  }
  if (const Json* cpu = member(**object, "cpu")) {
    const auto weight = bounded_integer(*cpu, static_cast<int>(policy::kMaxCpuWeight));
    if (!weight)
      return invalid("limits.cpu must be an integer between 1 and " +
                     std::to_string(policy::kMaxCpuWeight) +
                     " (a cgroup's weight; 100 is even), got " + shown(*cpu));
    out.cpu_weight = static_cast<std::uint32_t>(*weight);
  }
  return out;
}

// `environment.<key>`: first the shape of the whole array, then each entry (as for
// `network.<key>`).
std::expected<std::vector<std::string>, ConfigError> parse_variable_patterns(const Json& entries,
                                                                             std::string_view key) {
  const std::string name = "environment." + std::string(key);
  const auto non_empty = [](const Json& v) {
    return v.is_string() && !v.get_ref<const std::string&>().empty();
  };
  if (!entries.is_array() || !std::ranges::all_of(entries, non_empty))
    return invalid(name + " must be an array of non-empty strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i].get_ref<const std::string&>();
    if (!policy::is_variable_pattern(entry))
      return invalid(name + "[" + std::to_string(i) +
                         "] contains an invalid variable name pattern: " + core::printable(entry),
                     "an entry is a variable name (ASCII letters, digits and _) in which * matches "
                     "any run of characters, e.g. GITHUB_TOKEN or *_API_KEY");
    append_unique(out, entry);
  }
  return out;
}

std::expected<policy::EnvironmentSpec, ConfigError> parse_environment(const Document& document) {
  static constexpr std::array<std::string_view, 2> kKeys = {"passThrough", "remove"};
  policy::EnvironmentSpec out;
  auto object = section(document, "environment", kKeys);
  if (!object) return Failure(std::move(object.error()));
  if (*object == nullptr) return out;
  for (const auto& [key, target] :
       {std::pair{"passThrough", &out.pass_through}, std::pair{"remove", &out.remove}}) {
    const Json* entries = member(**object, key);
    if (entries == nullptr) continue;
    auto patterns = parse_variable_patterns(*entries, key);
    if (!patterns) return Failure(std::move(patterns.error()));
    *target = std::move(*patterns);
  }
  return out;
}

std::expected<Config, ConfigError> build_config(const Document& document) {
  if (!document.root.is_object()) return invalid("root must be an object");
  if (auto error = unknown_keys(document, "root", kSections)) return Failure(std::move(*error));
  Config config;
  auto subagents = parse_subagents(document);
  if (!subagents) return Failure(std::move(subagents.error()));
  config.subagents = std::move(*subagents);
  auto filesystem = parse_filesystem(document);
  if (!filesystem) return Failure(std::move(filesystem.error()));
  config.filesystem = std::move(*filesystem);
  auto host_ipc = parse_host_ipc(document);
  if (!host_ipc) return Failure(std::move(host_ipc.error()));
  config.host_ipc = std::move(*host_ipc);
  auto network = parse_network(document);
  if (!network) return Failure(std::move(network.error()));
  config.network = std::move(*network);
  auto approval = parse_approval(document);
  if (!approval) return Failure(std::move(approval.error()));
  config.approval = std::move(*approval);
  auto pi = parse_pi(document);
  if (!pi) return Failure(std::move(pi.error()));
  config.pi = *pi;
  auto limits = parse_limits(document);
  if (!limits) return Failure(std::move(limits.error()));
  config.limits = *limits;
  auto environment = parse_environment(document);
  if (!environment) return Failure(std::move(environment.error()));
  config.environment = std::move(*environment);
  return config;
}

nlohmann::ordered_json patterns_json(const std::vector<policy::DomainPattern>& patterns) {
  auto out = nlohmann::ordered_json::array();
  for (const policy::DomainPattern& pattern : patterns) out.push_back(pattern.text());
  return out;
}

nlohmann::ordered_json size_json(const policy::SizeLimit& size) {
  if (size.unit == policy::SizeLimit::Unit::Bytes) return size.value;
  return size.text();
}

nlohmann::ordered_json limits_json(const policy::LimitsSpec& limits) {
  return {{"maxProcesses", limits.max_processes},
          {"memory", size_json(limits.memory)},
          {"tmpfs", size_json(limits.tmpfs)},
          {"cpu", limits.cpu_weight}};
}

}  // namespace

std::string_view to_string(SubagentProvider provider) {
  switch (provider) {
    case SubagentProvider::Builtin:
      return "builtin";
    case SubagentProvider::PiSubagents:
      return "pi-subagents";
    case SubagentProvider::Off:
      return "off";
  }
  return "builtin";
}

std::string_view to_string(ExternalWorkerIsolation isolation) {
  return isolation == ExternalWorkerIsolation::Enforce ? "enforce" : "off";
}

std::string_view to_string(HostIpcMode mode) {
  return mode == HostIpcMode::Ask ? "ask" : "off";
}

std::string_view to_string(ReviewerFailureMode mode) {
  return mode == ReviewerFailureMode::Defer ? "defer" : "deny";
}

std::string_view to_string(PiFileTools file_tools) {
  return file_tools == PiFileTools::Host ? "host" : "sandboxed";
}

std::string ConfigError::describe(const std::filesystem::path& path) const {
  if (kind == Kind::Invalid) return message;
  return std::string(kInvalidJsonPrefix) + path.string() + ": " + std::to_string(line) + ":" +
         std::to_string(column) + ": " + reason;
}

core::Error ConfigError::to_error(const std::filesystem::path& path) const {
  return core::Error{describe(path), hint, 0};
}

std::expected<Config, ConfigError> parse(std::string_view json_text) {
  auto document = read_document(json_text);
  if (!document) return Failure(std::move(document.error()));
  return build_config(*document);
}

namespace {

/// `filesystem.exposeCredentials` as written: each name after `~/`.
std::vector<std::string> tilde_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) out.push_back("~/" + name);
  return out;
}

}  // namespace

std::string to_json(const Config& config) {
  using Ordered = nlohmann::ordered_json;
  Ordered approval = Ordered::object();
  if (!config.approval.reviewer.empty()) approval["reviewer"] = config.approval.reviewer;
  approval["reviewerTimeoutSeconds"] = config.approval.reviewer_timeout_seconds;
  approval["reviewerRetries"] = config.approval.reviewer_retries;
  approval["reviewerFailureMode"] = to_string(config.approval.reviewer_failure);
  approval["grantTtlSeconds"] = config.approval.grant_ttl_seconds;
  approval["questionTimeoutSeconds"] = config.approval.question_timeout_seconds;
  const Ordered out = {
      {"subagents",
       {{"provider", to_string(config.subagents.provider)},
        {"workerExtensions", config.subagents.worker_extensions},
        {"externalWorkerIsolation", to_string(config.subagents.external_worker_isolation)}}},
      {"filesystem",
       {{"additionalAllowRead", config.filesystem.additional_allow_read},
        {"additionalAllowWrite", config.filesystem.additional_allow_write},
        {"exposeHomeToolchains", config.filesystem.expose_home_toolchains},
        {"protection", config.filesystem.strict_protection ? "strict" : "guard"},
        {"exposeCredentials", tilde_names(config.filesystem.expose_credentials)}}},
      {"hostIPC",
       {{"mode", to_string(config.host_ipc.mode)},
        {"preflightCommandPrefixes", config.host_ipc.preflight_command_prefixes},
        {"retryOnUnixSocketError", config.host_ipc.retry_on_unix_socket_error},
        {"allowedSockets", config.host_ipc.allowed_sockets}}},
      {"network",
       {{"allowedDomains", patterns_json(config.network.allowed_domains)},
        {"deniedDomains", patterns_json(config.network.denied_domains)},
        {"deniedDomainReasons", config.network.denied_domain_reasons}}},
      {"approval", approval},
      {"limits", limits_json(config.limits)},
      {"environment",
       {{"passThrough", config.environment.pass_through}, {"remove", config.environment.remove}}},
      {"pi", {{"fileTools", to_string(config.pi.file_tools)}}},
  };
  // Strings from parse() are valid UTF-8; a Config built in code might not be, and printing
  // must not throw.
  return out.dump(2, ' ', false, Ordered::error_handler_t::replace);
}

}  // namespace pisandbox::config
