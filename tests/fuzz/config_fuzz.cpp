// libFuzzer target for the trusted configuration parser and domain patterns
// (docs/configuration.md).
//
// Properties checked on every input (abort on violation):
//   - config::parse never crashes; every refusal renders to a message with a documented
//     prefix (`invalid pi-sandbox configuration: ` or `invalid JSON in pi-sandbox
//     configuration at <path>: `);
//   - an accepted configuration survives to_json -> parse unchanged;
//   - policy::DomainPattern::parse either refuses with a reason, or yields a pattern whose
//     canonical text parses to the same pattern and which matches its own domain;
//   - the same bytes as a `network.deniedDomains` entry, and as an `environment.remove` entry,
//     are accepted or refused with the documented messages.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "policy/domain_pattern.hpp"
#include "policy/environment.hpp"

namespace {

namespace config = pisandbox::config;
namespace policy = pisandbox::policy;

const std::filesystem::path kPath = "/fuzz/config.json";

[[noreturn]] void violation(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void check_config(std::string_view text) {
  auto parsed = config::parse(text);
  if (!parsed) {
    const std::string message = parsed.error().describe(kPath);
    const std::string json_prefix = std::string(config::kInvalidJsonPrefix) + kPath.string() + ": ";
    if (!message.starts_with(config::kInvalidPrefix) && !message.starts_with(json_prefix)) {
      violation("undocumented message", message);
    }
    return;
  }
  const std::string printed = config::to_json(*parsed);
  auto again = config::parse(printed);
  if (!again || !(*again == *parsed)) violation("to_json does not round-trip", printed);
}

void check_pattern(std::string_view entry, policy::ListKind list) {
  auto pattern = policy::DomainPattern::parse(entry, list);
  if (!pattern) {
    if (pattern.error().empty()) violation("empty reason", entry);
    return;
  }
  auto again = policy::DomainPattern::parse(pattern->text(), list);
  if (!again || !(*again == *pattern)) violation("text() does not round-trip", pattern->text());
  const std::uint16_t port = pattern->port().value_or(443);
  switch (pattern->kind()) {
    case policy::DomainPattern::Kind::Exact:
      if (!pattern->matches(pattern->domain(), port)) violation("no self match", entry);
      break;
    case policy::DomainPattern::Kind::Subdomains:
      if (!pattern->matches("a." + pattern->domain(), port)) violation("no sub match", entry);
      if (pattern->matches(pattern->domain(), port)) violation("apex matched", entry);
      break;
    case policy::DomainPattern::Kind::Any:
      if (!pattern->matches("example.com", port)) violation("no any match", entry);
      break;
  }
}

void check_config_entry(std::string_view entry) {
  const nlohmann::json document = {{"network", {{"deniedDomains", {std::string(entry)}}}}};
  const std::string text = document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto parsed = config::parse(text);
  if (parsed) return;
  const std::string& message = parsed.error().message;
  const std::string shape = std::string(config::kInvalidPrefix) +
                            "network.deniedDomains must be an array of non-empty strings";
  const std::string entry_prefix = std::string(config::kInvalidPrefix) +
                                   "network.deniedDomains[0] contains an invalid domain pattern: ";
  if (message != shape && !message.starts_with(entry_prefix)) violation("entry message", message);
}

// The same bytes as an `environment.remove` entry: accepted exactly when they are a variable
// pattern, which then matches itself (every `*` matching nothing or itself); else refused with
// the documented messages.
void check_environment_entry(std::string_view entry) {
  const nlohmann::json document = {{"environment", {{"remove", {std::string(entry)}}}}};
  const std::string text = document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  auto parsed = config::parse(text);
  const bool valid = policy::is_variable_pattern(entry);
  if (parsed) {
    if (!valid || parsed->environment.remove != std::vector<std::string>{std::string(entry)})
      violation("environment entry accepted", entry);
    if (!policy::matches_variable(entry, entry)) violation("no self match", entry);
    return;
  }
  const std::string& message = parsed.error().message;
  const std::string shape = std::string(config::kInvalidPrefix) +
                            "environment.remove must be an array of non-empty strings";
  const std::string entry_prefix =
      std::string(config::kInvalidPrefix) +
      "environment.remove[0] contains an invalid variable name pattern: ";
  if (valid || (message != shape && !message.starts_with(entry_prefix)))
    violation("environment entry message", message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_config(bytes);
  check_pattern(bytes, policy::ListKind::Allowed);
  check_pattern(bytes, policy::ListKind::Denied);
  check_config_entry(bytes);
  check_environment_entry(bytes);
  return 0;
}
