#include "proxy/protocol/credential.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

#include "core/random.hpp"
#include "proxy/protocol/http_syntax.hpp"

namespace pisandbox::proxy {

ProxyCredential generate_credential() {
  std::array<unsigned char, 16> bytes{};
  if (auto filled = core::random_bytes(bytes); !filled)
    throw std::runtime_error("the random source failed (" + filled.error().message +
                             "): no proxy credential");
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string password;
  for (unsigned char byte : bytes) {
    password.push_back(kHex[byte >> 4]);
    password.push_back(kHex[byte & 0x0f]);
  }
  return ProxyCredential{std::string(kCredentialUsername), std::move(password)};
}

std::string userinfo(const ProxyCredential& credential) {
  return credential.username + ":" + credential.password;
}

std::string base64(std::string_view bytes) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k)
      group = (group << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
    for (std::size_t k = 0; k < 4; ++k)
      out.push_back(k <= n ? kAlphabet[(group >> (18 - 6 * k)) & 0x3f] : '=');
  }
  return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

bool proxy_authorization_matches(const std::vector<Header>& headers,
                                 const ProxyCredential& credential) {
  const Header* found = nullptr;
  for (const Header& header : headers) {
    if (!equals_ignoring_case(header.name, "proxy-authorization")) continue;
    if (found != nullptr) return false;
    found = &header;
  }
  if (found == nullptr) return false;
  const std::string_view value = found->value;
  constexpr std::string_view kScheme = "basic";
  if (value.size() <= kScheme.size() || !equals_ignoring_case(value.substr(0, 5), kScheme) ||
      value[5] != ' ')
    return false;
  const std::size_t token = value.find_first_not_of(' ', kScheme.size());
  if (token == std::string_view::npos) return false;
  return constant_time_equal(value.substr(token), base64(userinfo(credential)));
}

std::string proxy_authentication_required_response() {
  constexpr std::string_view kBody =
      "this proxy needs the credential in the command's proxy URLs\n";
  return "HTTP/1.1 407 Proxy Authentication Required\r\n"
         "Proxy-Authenticate: Basic realm=\"pi-sandbox\"\r\n"
         "Content-Type: text/plain\r\n"
         "Content-Length: " +
         std::to_string(kBody.size()) +
         "\r\n"
         "Connection: close\r\n"
         "\r\n" +
         std::string(kBody);
}

}  // namespace pisandbox::proxy
