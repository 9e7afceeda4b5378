// libFuzzer target for the copy of a git configuration file without its credentials
// (policy/credential_lines.hpp, ConfigFormat::GitConfig). The input is the file.
//
// Properties checked on every input (abort on violation):
//   - sanitize_config never crashes nor reads out of bounds (ASan);
//   - a copy masked whole is empty and has a reason;
//   - a sanitized copy is never longer than the file, parses as git reads it (the guard's
//     parser), and none of its entries is a credential: no `http.*.extraheader`, no variable
//     holding `pass`, `token`, `secret` or `auth`, no `user:password@` (nor a `user@` but for
//     ssh) in a key or a value;
//   - every removed item has a printable key of bounded size and a line number within the file;
//   - sanitizing the copy again gives it back unchanged with nothing removed (the copy holds no
//     credential), and the reader is deterministic.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "policy/credential_lines.hpp"
#include "policy/git_config_guard.hpp"

namespace {

namespace policy = pisandbox::policy;

[[noreturn]] void violation(const char* what, std::string_view detail) {
  std::fprintf(stderr, "property violated: %s: %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// A URL's user information that is a secret, found independently of the reader: the authority
/// runs to `/`, `?`, `#` or whitespace; `user@` alone is allowed for an ssh scheme.
bool secret_userinfo(std::string_view text) {
  for (std::size_t sep = text.find("://"); sep != std::string_view::npos;
       sep = text.find("://", sep + 3)) {
    std::size_t stop = sep + 3;
    while (stop < text.size() &&
           std::string_view("/?# \t\n\r").find(text[stop]) == std::string_view::npos)
      ++stop;
    const std::string_view authority = text.substr(sep + 3, stop - sep - 3);
    const std::size_t at = authority.rfind('@');
    if (at == std::string_view::npos) continue;
    std::size_t begin = sep;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(text[begin - 1])) ||
                         text[begin - 1] == '+' || text[begin - 1] == '-'))
      --begin;
    const std::string scheme = lower(text.substr(begin, sep - begin));
    const bool ssh = scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git";
    if (!ssh || authority.substr(0, at).find(':') != std::string_view::npos) return true;
  }
  return false;
}

void check(std::string_view bytes) {
  const auto out = policy::sanitize_config(policy::ConfigFormat::GitConfig, bytes);
  if (!out.masked_whole.empty()) {
    if (!out.bytes.empty()) violation("masked whole but not empty", out.bytes);
    return;
  }
  if (out.bytes.size() > bytes.size()) violation("the copy grew", out.bytes);
  const auto scan = policy::read_git_config(out.bytes);
  if (scan.malformed) violation("the copy does not parse", scan.malformed_reason);
  for (const auto& entry : scan.findings) {
    const std::string key = lower(entry.key);
    const std::string variable = key.substr(key.rfind('.') + 1);
    if (key.starts_with("http.") && variable == "extraheader") violation("extraheader", key);
    for (const char* word : {"pass", "token", "secret", "auth"})
      if (variable.find(word) != std::string::npos) violation("a credential key", key);
    if (secret_userinfo(entry.key) || secret_userinfo(entry.value))
      violation("a URL's user information", entry.key);
  }
  std::size_t lines = 1;
  for (const char c : bytes) lines += c == '\n' || c == '\r' ? 1 : 0;
  for (const auto& item : out.removed) {
    if (item.key.empty() || item.key.size() > policy::kMaxShownKeyBytes + 30)
      violation("key size", item.key);
    for (const unsigned char c : item.key)
      if (c < 0x20 || c >= 0x7f) violation("key not printable", item.key);
    if (item.line == 0 || item.line > lines) violation("line out of range", item.key);
  }
  const auto again = policy::sanitize_config(policy::ConfigFormat::GitConfig, out.bytes);
  if (again != policy::SanitizedConfig{out.bytes, {}, ""})
    violation("the copy is not a fixed point", again.masked_whole);
  if (policy::sanitize_config(policy::ConfigFormat::GitConfig, bytes) != out)
    violation("not deterministic", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  check(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
