// pisandbox::core — ASCII character classes for the parsers of untrusted text (locale-free,
// unlike <cctype>).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace pisandbox::core {

/// Space, tab, LF, CR, FF, VT.
[[nodiscard]] constexpr bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
/// `0`-`9`.
[[nodiscard]] constexpr bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
/// `0`-`9`, `a`-`f` (lowercase only: callers lowercase first).
[[nodiscard]] constexpr bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f');
}
/// A character of a lowercase DNS label (RFC 1123 §2.1): `a`-`z`, `0`-`9`, `-`.
[[nodiscard]] constexpr bool is_label_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || c == '-';
}
/// `A`-`Z` to `a`-`z`; every other byte unchanged.
[[nodiscard]] constexpr char to_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// `text` without leading and trailing is_space() characters (a view into `text`).
[[nodiscard]] constexpr std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}
/// A copy of `text` with `A`-`Z` lowered (to_lower()); other bytes unchanged.
[[nodiscard]] inline std::string lowercase(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(), to_lower);
  return out;
}

}  // namespace pisandbox::core
