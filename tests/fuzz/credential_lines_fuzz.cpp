// libFuzzer target for the reader of tool configuration with credentials
// (policy/credential_lines.hpp). The first byte picks the format, the rest is the file.
//
// Properties checked on every input (abort on violation):
//   - sanitize_config never crashes nor reads out of bounds (ASan);
//   - a copy masked whole is empty and has a reason; a sanitized one is no longer than the file
//     plus two bytes per emptied JSON value, and never longer than the file otherwise;
//   - every removed item has a key of printable ASCII of at most kMaxShownKeyBytes + 3 bytes
//     (and the suffix of a URL's user information) and a line number within the file;
//   - sanitizing a copy again removes no more lines of credentials (the copy holds none),
//     except URL user information the first pass exposed (`a://b@c://d@e`);
//   - the reader is deterministic.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "policy/credential_lines.hpp"

namespace {

namespace policy = pisandbox::policy;

constexpr std::string_view kUserinfoSuffix = " (user:password of a URL)";

[[noreturn]] void violation(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

std::size_t line_count(std::string_view bytes) {
  std::size_t lines = 1;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i] == '\n' || (bytes[i] == '\r' && (i + 1 >= bytes.size() || bytes[i + 1] != '\n')))
      ++lines;
  return lines;
}

void check(policy::ConfigFormat format, std::string_view bytes) {
  const auto out = policy::sanitize_config(format, bytes);
  if (!out.masked_whole.empty()) {
    if (!out.bytes.empty()) violation("masked whole but not empty", out.bytes);
    return;
  }
  if (format != policy::ConfigFormat::DockerConfig && out.bytes.size() > bytes.size())
    violation("the copy grew", out.bytes);
  const std::size_t lines = line_count(bytes);
  for (const auto& item : out.removed) {
    if (item.key.empty() ||
        item.key.size() > policy::kMaxShownKeyBytes + 3 + kUserinfoSuffix.size())
      violation("key size", item.key);
    for (const unsigned char c : item.key)
      if (c < 0x20 || c >= 0x7f) violation("key not printable", item.key);
    if (item.line == 0 || item.line > lines) violation("line out of range", item.key);
  }
  const auto again = policy::sanitize_config(format, out.bytes);
  for (const auto& item : again.removed)
    if (item.key.find("user:password of a URL") == std::string_view::npos &&
        again.masked_whole.empty())
      violation("a credential left in the copy", item.key);
  if (policy::sanitize_config(format, bytes) != out) violation("not deterministic", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  constexpr policy::ConfigFormat kFormats[] = {
      policy::ConfigFormat::Npmrc,         policy::ConfigFormat::YarnrcYml,
      policy::ConfigFormat::PipConf,       policy::ConfigFormat::CargoToml,
      policy::ConfigFormat::MavenSettings, policy::ConfigFormat::DockerConfig,
      policy::ConfigFormat::GitConfig};
  const auto format = kFormats[data[0] % std::size(kFormats)];
  check(format, std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  return 0;
}
