// pisandbox::core — showing untrusted text in a message (pure; no I/O).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace pisandbox::core {

namespace detail {

/// Whether E2 `second` `third` encodes a bidirectional formatting character.
inline bool is_direction_control(unsigned char second, char third_char) {
  const auto third = static_cast<unsigned char>(third_char);
  if (second == 0x80) return third == 0x8e || third == 0x8f || (third >= 0xaa && third <= 0xae);
  if (second == 0x81) return third >= 0xa6 && third <= 0xa9;
  return false;
}

}  // namespace detail

/// Text from an untrusted source made safe to show on a terminal or in a log line, whole:
/// a newline becomes `\n`, other C0 controls (NUL included) and DEL `\xNN`, C1 controls
/// `\u00NN`, and the Unicode bidirectional controls `\uNNNN` (U+200E, U+200F, U+202A-U+202E,
/// U+2066-U+2069 and the Arabic letter mark U+061C: Unicode Standard Annex #9, "Explicit
/// Directional Formatting Characters" and "Implicit Directional Marks"). Everything else,
/// valid UTF-8 or not, is kept byte for byte, so printable input reads as it was.
inline std::string printable(std::string_view text) {
  using detail::is_direction_control;
  std::string out;
  char buffer[8];
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    if (byte == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      std::snprintf(buffer, sizeof buffer, "\\x%02x", byte);
      out += buffer;
    } else if (byte == 0xc2 && next >= 0x80 && next <= 0x9f) {
      std::snprintf(buffer, sizeof buffer, "\\u00%02x", next);
      out += buffer;
      ++i;
    } else if (byte == 0xd8 && next == 0x9c) {
      // U+061C ARABIC LETTER MARK reorders like U+200F.
      out += "\\u061c";
      ++i;
    } else if (byte == 0xe2 && i + 2 < text.size() && is_direction_control(next, text[i + 2])) {
      // Bidirectional controls (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) would let a
      // command reorder what the question shows (CVE-2021-42574, "Trojan Source").
      const unsigned code =
          0x2000 | ((next & 0x0f) << 6) | (static_cast<unsigned char>(text[i + 2]) & 0x3f);
      std::snprintf(buffer, sizeof buffer, "\\u%04x", code);
      out += buffer;
      i += 2;
    } else {
      out += static_cast<char>(byte);
    }
  }
  return out;
}

}  // namespace pisandbox::core
