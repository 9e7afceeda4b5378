#include "proxy/protocol/destination.hpp"

#include <idn2.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>

#include "core/ascii.hpp"

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace pisandbox::proxy {
namespace {

using Reason = std::unexpected<std::string>;

using core::is_digit;
using core::is_hex_digit;
using core::is_space;
using core::trim;

using core::is_label_char;

using core::to_lower;

bool is_ascii(std::string_view text) {
  return std::ranges::all_of(text, [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Bytes that end a C string or cannot be part of a host name in any spelling; checked before
// libidn2 sees the text, which it reads as a NUL-terminated string.
bool has_control(std::string_view text) {
  return std::ranges::any_of(text, [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte <= 0x20 || byte == 0x7f;
  });
}

// An IPv6 literal in any spelling: optional brackets, then hex digits, ':' and '.' (an
// embedded IPv4 part) with at least one ':', then an optional zone after '%' (RFC 4007
// section 11, RFC 6874). Anything else with these characters is not an address but a bad
// name (`example.com:443`, `evil"},{"a":1}`), and is refused as one.
bool looks_ipv6(std::string_view text) {
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    text = text.substr(1, close - 1);  // what follows the bracket (a port) is not a name
  }
  const std::string_view address = text.substr(0, text.find('%'));
  if (address.find(':') == std::string_view::npos) return false;
  return std::ranges::all_of(address,
                             [](char c) { return is_hex_digit(c) || c == ':' || c == '.'; });
}

// The last label of an IPv4 literal in any inet_aton(3) spelling is decimal, octal (also all
// digits) or `0x` hex (RFC 3696 section 2: no top-level domain is all-numeric).
bool looks_ipv4(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  const std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (last.empty()) return false;
  if (std::ranges::all_of(last, is_digit)) return true;
  return last.starts_with("0x") && std::ranges::all_of(last.substr(2), is_hex_digit);
}

// libidn2 and the libunistring it needs are opened the first time a name with non-ASCII
// characters is converted, and kept for the life of the process: an ASCII name never needs
// them, and linked at start they cost every command about 560 dynamic symbol lookups
// (docs/benchmarks.md, "run"). By soname, `libidn2.so.0` (the package `libidn2-0` on Debian
// and Ubuntu: cmake/package.cmake); elsewhere the library is linked.
struct LibIdn2 {
  decltype(&idn2_lookup_u8) lookup_u8 = nullptr;
  decltype(&idn2_free) free = nullptr;
  decltype(&idn2_strerror) strerror = nullptr;
  std::string error;  ///< why it could not be loaded; empty when it was
};

#if defined(__linux__)
constexpr const char* kIdn2Soname = "libidn2.so.0";

LibIdn2 load_idn2() {
  LibIdn2 lib;
  // RTLD_NODELETE: never unloaded, so the pointers hold for the life of the process.
  void* handle = ::dlopen(kIdn2Soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    lib.error = std::string("dlopen(") + kIdn2Soname + "): " + (why != nullptr ? why : "failed");
    return lib;
  }
  const auto symbol = [&](const char* name, auto& out) {
    out = reinterpret_cast<std::remove_reference_t<decltype(out)>>(::dlsym(handle, name));
    if (out == nullptr && lib.error.empty())
      lib.error = std::string("dlsym(") + name + ") in " + kIdn2Soname + ": not found";
  };
  symbol("idn2_lookup_u8", lib.lookup_u8);
  symbol("idn2_free", lib.free);
  symbol("idn2_strerror", lib.strerror);
  return lib;
}
#else
LibIdn2 load_idn2() {
  return {&idn2_lookup_u8, &idn2_free, &idn2_strerror, {}};
}
#endif

const LibIdn2& libidn2() {
  static const LibIdn2 loaded = load_idn2();  // thread-safe initialisation (C++11 [stmt.dcl])
  return loaded;
}

// IDNA 2008 lookup with the UTS #46 non-transitional mapping (libidn2).
std::expected<std::string, std::string> to_ascii(const std::string& name) {
  const LibIdn2& lib = libidn2();
  if (!lib.error.empty()) {
    return Reason("is not ASCII, and internationalised names cannot be converted here (" +
                  lib.error + ")");
  }
  std::uint8_t* out = nullptr;
  const int rc = lib.lookup_u8(reinterpret_cast<const std::uint8_t*>(name.c_str()), &out,
                               IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
  const std::unique_ptr<std::uint8_t, decltype(lib.free)> owned(out, lib.free);
  if (rc != IDN2_OK || out == nullptr) {
    return Reason(std::string("is not a valid internationalised name (") + lib.strerror(rc) + ")");
  }
  std::string ascii(reinterpret_cast<const char*>(out));
  std::ranges::transform(ascii, ascii.begin(), to_lower);
  return ascii;
}

std::optional<std::string> label_reason(std::string_view label) {
  if (label.empty()) return "has an empty label";
  if (label.size() > kMaxLabelLength) return "has a label longer than 63 characters";
  if (!std::ranges::all_of(label, is_label_char)) {
    return "has a character other than a-z, 0-9, '-' and '.'";
  }
  if (label.front() == '-' || label.back() == '-') {
    return "has a label that starts or ends with '-'";
  }
  return std::nullopt;
}

// The checks of step 6 on the ASCII form, and step 5 (IP literals) first so that
// `2130706433` is named an address rather than a single label.
std::optional<std::string> ascii_name_reason(std::string_view name) {
  if (name.empty()) return "is empty";
  if (looks_ipv6(name) || looks_ipv4(name)) return "is an IP address literal";
  if (name.size() > kMaxHostLength) return "is longer than 253 characters";
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::size_t end = dot == std::string_view::npos ? name.size() : dot;
    if (auto reason = label_reason(name.substr(start, end - start))) return reason;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (name.find('.') == std::string_view::npos) {
    return "is a single label (like localhost), not a domain name";
  }
  return std::nullopt;
}

}  // namespace

std::expected<std::string, std::string> normalise_host(std::string_view host) {
  const std::string_view trimmed = trim(host);
  if (trimmed.empty()) return Reason("is empty");
  if (has_control(trimmed)) return Reason("has a space or control character");
  if (looks_ipv6(trimmed)) return Reason("is an IP address literal");
  std::string name(trimmed);
  std::ranges::transform(name, name.begin(), to_lower);
  if (name.ends_with('.')) name.pop_back();
  if (name.empty()) return Reason("is empty");
  if (!is_ascii(name)) {
    auto ascii = to_ascii(name);
    if (!ascii) return Reason(ascii.error());
    name = std::move(*ascii);
  }
  if (auto reason = ascii_name_reason(name)) return Reason(*reason);
  return name;
}

std::expected<std::uint16_t, std::string> parse_port(std::string_view text) {
  if (text.empty()) return Reason("has an empty port");
  if (text.size() > 5 || !std::ranges::all_of(text, is_digit)) {
    return Reason("has a port that is not a number between 1 and 65535");
  }
  unsigned value = 0;
  for (char c : text) value = value * 10 + static_cast<unsigned>(c - '0');
  if (value == 0 || value > 65535) {
    return Reason("has a port that is not a number between 1 and 65535");
  }
  return static_cast<std::uint16_t>(value);
}

std::expected<Authority, std::string> parse_authority(std::string_view text) {
  if (text.find('@') != std::string_view::npos) return Reason("has user information");
  std::size_t colon = std::string_view::npos;
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return Reason("has an unterminated '['");
    if (close + 1 < text.size() && text[close + 1] != ':') return Reason("has no port");
    colon = close + 1 < text.size() ? close + 1 : std::string_view::npos;
  } else {
    colon = text.rfind(':');
  }
  if (colon == std::string_view::npos) return Reason("has no port");
  const std::string_view host = text.substr(0, colon);
  if (host.empty()) return Reason("has an empty host");
  auto port = parse_port(text.substr(colon + 1));
  if (!port) return Reason(port.error());
  return Authority{std::string(host), *port};
}

}  // namespace pisandbox::proxy
