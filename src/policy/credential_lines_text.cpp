#include "policy/credential_lines_text.hpp"

#include <algorithm>
#include <cctype>

namespace pisandbox::policy::config_text {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::vector<Line> split_lines(std::string_view bytes) {
  std::vector<Line> lines;
  std::size_t start = 0;
  while (start < bytes.size()) {
    const std::size_t stop = bytes.find_first_of("\r\n", start);
    if (stop == std::string_view::npos) {
      lines.push_back({bytes.substr(start), {}, lines.size() + 1, start});
      break;
    }
    const std::size_t end_size = bytes.substr(stop, 2) == "\r\n" ? 2 : 1;
    lines.push_back(
        {bytes.substr(start, stop - start), bytes.substr(stop, end_size), lines.size() + 1, start});
    start = stop + end_size;
  }
  return lines;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

std::size_t indentation(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_space(text[n])) ++n;
  return n;
}

/// A key as `policy` may print it: printable ASCII, cut at kMaxShownKeyBytes.
std::string shown(std::string_view key) {
  std::string out;
  for (const unsigned char c : key.substr(0, kMaxShownKeyBytes))
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  if (key.size() > kMaxShownKeyBytes) out += "...";
  return out;
}

/// `text` lowercased with the escapes YAML, TOML and JSON share (`\xXX`, `\uXXXX`,
/// `\UXXXXXXXX`) decoded where they stand for ASCII, so that an escaped key is seen by its
/// name.
std::string decoded_lower(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char kind = text[i + 1];
      const std::size_t digits = kind == 'x' ? 2 : kind == 'u' ? 4 : kind == 'U' ? 8 : 0;
      if (digits != 0 && i + 2 + digits <= text.size()) {
        unsigned long value = 0;
        bool ok = true;
        for (std::size_t d = 0; d < digits; ++d) {
          const int v = hex_value(text[i + 2 + d]);
          ok = ok && v >= 0;
          value = value * 16 + static_cast<unsigned long>(std::max(v, 0));
        }
        if (ok && value < 0x80) {
          out += static_cast<char>(std::tolower(static_cast<int>(value)));
          i += 1 + digits;
          continue;
        }
      }
    }
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  return out;
}

/// Removes the user information (`user:password@`, `token@`) of every URL written plainly in
/// `text` (RFC 3986, section 3.2.1: the authority ends at `/`, `?`, `#`; a quote, `<` or
/// whitespace ends it too in a configuration file). True when something was removed.
bool strip_userinfo(std::string& text) {
  bool changed = false;
  std::size_t from = 0;
  while ((from = text.find("://", from)) != std::string::npos) {
    const std::size_t start = from + 3;
    std::size_t stop = start;
    while (stop < text.size() &&
           std::string_view("/?#\"'<> \t\\").find(text[stop]) == std::string_view::npos)
      ++stop;
    // The last `@` ends the user information, as URL parsers read `user:p@ss@host`.
    const std::size_t at = text.rfind('@', stop == start ? start : stop - 1);
    if (at != std::string::npos && at >= start && at < stop) {
      text.erase(start, at + 1 - start);
      changed = true;
    }
    from = start;
  }
  return changed;
}

/// How a removed `user:password@` is named: by the option it was in, never by its value.
std::string userinfo_key(std::string_view key) {
  return key.empty() ? "user:password of a URL" : shown(key) + " (user:password of a URL)";
}

/// `bytes` with the user information of every URL removed, line by line, each removal added to
/// `removed` (line numbers stay those of `bytes`).
std::string strip_userinfo_lines(std::string_view bytes, std::vector<RemovedItem>& removed) {
  std::string out;
  for (const auto& line : split_lines(bytes)) {
    std::string text(line.text);
    if (strip_userinfo(text)) removed.push_back({line.number, userinfo_key("")});
    out += text;
    out += line.end;
  }
  return out;
}

SanitizedConfig masked(std::string reason) {
  return {{}, {}, std::move(reason)};
}

/// `result` with the URL removals made before it, in line order.
SanitizedConfig with_userinfo(SanitizedConfig result, const std::vector<RemovedItem>& userinfo) {
  result.removed.insert(result.removed.end(), userinfo.begin(), userinfo.end());
  std::ranges::stable_sort(result.removed, {}, &RemovedItem::line);
  return result;
}

}  // namespace pisandbox::policy::config_text
