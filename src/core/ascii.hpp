// pisandbox::core — ASCII character classes for the parsers of untrusted text (locale-free,
// unlike <cctype>).
#pragma once

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

}  // namespace pisandbox::core
