#include "proxy/protocol/socks5.hpp"

#include <algorithm>

namespace pisandbox::proxy {
namespace {

constexpr std::uint8_t kAtypIpv4 = 0x01;
constexpr std::uint8_t kAtypDomain = 0x03;
constexpr std::uint8_t kAtypIpv6 = 0x04;

// Appends bytes until `buffer` holds `wanted` bytes; returns how many were taken.
std::size_t fill(std::vector<std::uint8_t>& buffer, std::size_t wanted, std::string_view bytes) {
  const std::size_t take =
      std::min(bytes.size(), wanted > buffer.size() ? wanted - buffer.size() : 0);
  buffer.insert(buffer.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
  return take;
}

// The length of the whole request once its first five bytes are known (RFC 1928 section 4):
// VER CMD RSV ATYP, then 4, 1+n or 16 address bytes, then 2 port bytes.
std::size_t request_length(const std::vector<std::uint8_t>& head) {
  switch (head[3]) {
    case kAtypIpv4:
      return 4 + 4 + 2;
    case kAtypIpv6:
      return 4 + 16 + 2;
    default:
      return 4 + 1 + head[4] + 2;
  }
}

}  // namespace

std::variant<SocksNeedMore, SocksGreeting, SocksError> SocksGreetingParser::feed(
    std::string_view bytes) {
  std::size_t used = fill(buffer_, 2, bytes);
  if (buffer_.size() < 2) return SocksNeedMore{};
  if (buffer_[0] != kSocksVersion) return SocksError{std::nullopt, "not SOCKS version 5"};
  if (buffer_[1] == 0) return SocksError{std::nullopt, "no authentication methods offered"};
  used += fill(buffer_, 2 + std::size_t{buffer_[1]}, bytes.substr(used));
  if (buffer_.size() < 2 + std::size_t{buffer_[1]}) return SocksNeedMore{};
  return SocksGreeting{std::vector<std::uint8_t>(buffer_.begin() + 2, buffer_.end()), used};
}

std::variant<SocksNeedMore, SocksRequest, SocksError> SocksRequestParser::feed(
    std::string_view bytes) {
  std::size_t used = fill(buffer_, 4, bytes);
  if (buffer_.size() < 4) return SocksNeedMore{};
  if (buffer_[0] != kSocksVersion) {
    return SocksError{SocksReply::GeneralFailure, "request is not SOCKS version 5"};
  }
  if (buffer_[2] != 0) return SocksError{SocksReply::GeneralFailure, "reserved byte is not 0"};
  const std::uint8_t type = buffer_[3];
  if (type != kAtypIpv4 && type != kAtypDomain && type != kAtypIpv6) {
    return SocksError{SocksReply::AddressTypeNotSupported, "unknown address type"};
  }
  used += fill(buffer_, 5, bytes.substr(used));
  if (buffer_.size() < 5) return SocksNeedMore{};
  if (type == kAtypDomain && buffer_[4] == 0) {
    return SocksError{SocksReply::GeneralFailure, "empty domain name"};
  }
  const std::size_t length = request_length(buffer_);
  used += fill(buffer_, length, bytes.substr(used));
  if (buffer_.size() < length) return SocksNeedMore{};

  SocksRequest request;
  request.command = buffer_[1];
  request.address_type = type;
  request.port = static_cast<std::uint16_t>(buffer_[length - 2] << 8 | buffer_[length - 1]);
  request.consumed = used;
  if (type == kAtypDomain) {
    request.host.assign(buffer_.begin() + 5, buffer_.end() - 2);
  } else if (type == kAtypIpv4) {
    request.address = IpAddress::v4({buffer_[4], buffer_[5], buffer_[6], buffer_[7]});
    request.host = request.address.text();
  } else {
    std::array<std::uint8_t, 16> bytes16{};
    std::copy(buffer_.begin() + 4, buffer_.begin() + 20, bytes16.begin());
    request.address = IpAddress::v6(bytes16);
    request.host = request.address.text();
  }
  return request;
}

std::variant<SocksNeedMore, SocksUserPass, SocksError> SocksUserPassParser::feed(
    std::string_view bytes) {
  std::size_t used = fill(buffer_, 2, bytes);
  if (buffer_.size() < 2) return SocksNeedMore{};
  if (buffer_[0] != kUserPassVersion)
    return SocksError{std::nullopt, "not the username/password sub-negotiation version 1"};
  const std::size_t user_end = 2 + std::size_t{buffer_[1]};
  used += fill(buffer_, user_end + 1, bytes.substr(used));
  if (buffer_.size() < user_end + 1) return SocksNeedMore{};
  const std::size_t end = user_end + 1 + std::size_t{buffer_[user_end]};
  used += fill(buffer_, end, bytes.substr(used));
  if (buffer_.size() < end) return SocksNeedMore{};
  SocksUserPass result;
  result.username.assign(buffer_.begin() + 2,
                         buffer_.begin() + static_cast<std::ptrdiff_t>(user_end));
  result.password.assign(buffer_.begin() + static_cast<std::ptrdiff_t>(user_end) + 1,
                         buffer_.end());
  result.consumed = used;
  return result;
}

std::uint8_t select_method(const std::vector<std::uint8_t>& methods, SocksAuth auth) {
  const std::uint8_t wanted = auth == SocksAuth::UserPass ? kMethodUserPass : kMethodNoAuth;
  return std::ranges::find(methods, wanted) != methods.end() ? wanted : kMethodNoneAcceptable;
}

std::array<std::uint8_t, 2> userpass_reply(bool accepted) {
  return {kUserPassVersion, static_cast<std::uint8_t>(accepted ? 0x00 : 0x01)};
}

std::array<std::uint8_t, 2> method_reply(std::uint8_t method) {
  return {kSocksVersion, method};
}

std::array<std::uint8_t, 10> socks_reply(SocksReply reply) {
  return {kSocksVersion, static_cast<std::uint8_t>(reply), 0, kAtypIpv4, 0, 0, 0, 0, 0, 0};
}

}  // namespace pisandbox::proxy
