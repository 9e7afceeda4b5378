// pisandbox::approval — lowercase hexadecimal, the form of request hashes and grant tokens.
// Internal to src/approval.
#pragma once

#include <span>
#include <string>

namespace pisandbox::approval {

/// `bytes` as lowercase hex digits, two per byte.
[[nodiscard]] inline std::string to_lower_hex(std::span<const unsigned char> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const unsigned char b : bytes) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 0x0f]);
  }
  return hex;
}

}  // namespace pisandbox::approval
