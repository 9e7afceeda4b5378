// pisandbox::core — base64 (RFC 4648, section 4: the standard alphabet, padded to a multiple of
// four characters). Pure code; no I/O. The serve protocol's `data` fields (docs/rpc.md) and the
// key blobs of ssh public keys (docs/security.md, "Signed commits") are read with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pisandbox::core {

/// `bytes` in base64 with padding: 4 characters per 3 bytes, the last group padded with `=`
/// ("abcd" → "YWJjZA=="); "" for no bytes.
[[nodiscard]] inline std::string base64_encode(std::string_view bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve(4 * ((bytes.size() + 2) / 3));
  std::size_t i = 0;
  const auto byte = [&](std::size_t at) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t group = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(group >> shift) & 63]);
  }
  if (const std::size_t left = bytes.size() - i; left > 0) {
    const std::uint32_t group = (byte(i) << 16) | (left == 2 ? byte(i + 1) << 8 : 0);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(left == 2 ? kAlphabet[(group >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

/// The bytes `text` spells in base64 ("" for ""), or nullopt when it is not padded base64: a
/// length that is not a multiple of four, a character outside the alphabet (whitespace and line
/// breaks included), more than two `=` or a `=` before the end. The unused low bits of the last
/// group are ignored (RFC 4648, section 3.5 allows a decoder to reject them; none of our
/// writers sets them).
[[nodiscard]] inline std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  const auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(3 * (text.size() / 4));
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < text.size() - padding; ++i) {
    const int v = value(text[i]);
    if (v < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    if (++count == 4) {
      out.push_back(static_cast<char>((bits >> 16) & 0xff));
      out.push_back(static_cast<char>((bits >> 8) & 0xff));
      out.push_back(static_cast<char>(bits & 0xff));
      bits = 0;
      count = 0;
    }
  }
  // With padding, the last group holds 2 (`==`) or 3 (`=`) characters; without, none.
  if (count != (padding == 0 ? 0 : 4 - static_cast<int>(padding))) return std::nullopt;
  if (count == 2) out.push_back(static_cast<char>((bits >> 4) & 0xff));
  if (count == 3) {
    out.push_back(static_cast<char>((bits >> 10) & 0xff));
    out.push_back(static_cast<char>((bits >> 2) & 0xff));
  }
  return out;
}

}  // namespace pisandbox::core
