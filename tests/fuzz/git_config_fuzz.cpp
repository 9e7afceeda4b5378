// libFuzzer target for the git configuration guard's parser and allowlist
// (policy/git_config_guard.hpp, docs/security.md "The git configuration guard").
//
// Properties checked on every input (abort on violation):
//   - scan_git_config never crashes; a malformed scan has a reason, a well-formed one none;
//   - every finding has a line range inside the text (first_line <= last_line <= the number
//     of `\n`), and, when it names the allowlist row that refused its value, a key of that
//     row's section; a key before any section header (git reads `g = 1` there as the key `g`)
//     names no row;
//   - without_findings(text, scan(text).findings) scans again as well-formed, with no
//     findings, and is never longer than the text;
//   - added_not_allowed(scan, scan) is empty, and added_not_allowed(nothing, scan) is every
//     finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/git_config_guard.hpp"

namespace {

namespace policy = pisandbox::policy;

[[noreturn]] void violation(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

void check_findings(std::string_view text, const policy::GitConfigScan& scan) {
  if (scan.malformed == scan.malformed_reason.empty()) violation("reason", scan.malformed_reason);
  const auto lines = static_cast<std::size_t>(std::ranges::count(text, '\n'));
  for (const auto& finding : scan.findings) {
    if (finding.rule != nullptr &&
        !finding.key.starts_with(std::string(finding.rule->section) + "."))
      violation("row of another section", finding.key);
    if (finding.key.find('.') == std::string::npos && finding.rule != nullptr)
      violation("a row for a key with no section", finding.key);
    if (finding.first_line > finding.last_line || finding.last_line > lines)
      violation("line range", finding.key);
    if (finding.implicit && !finding.value.empty()) violation("implicit value", finding.value);
  }
}

void check_sanitised(std::string_view text, const policy::GitConfigScan& scan) {
  const std::string sanitised = policy::without_findings(text, scan.findings);
  if (sanitised.size() > text.size()) violation("sanitised grew", sanitised);
  const auto again = policy::scan_git_config(sanitised);
  if (again.malformed) violation("sanitised malformed", again.malformed_reason);
  if (!again.findings.empty()) violation("sanitised has findings", again.findings[0].key);
}

void check_added(const policy::GitConfigScan& scan) {
  if (!policy::added_not_allowed(scan, scan).empty()) violation("added to itself", "");
  if (policy::added_not_allowed({}, scan).size() != scan.findings.size())
    violation("added from nothing", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto scan = policy::scan_git_config(text);
  check_findings(text, scan);
  check_sanitised(text, scan);
  check_added(scan);
  return 0;
}
