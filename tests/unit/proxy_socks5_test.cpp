// proxy SOCKS5 parsers and replies (RFC 1928; docs/network.md, "Answers the command sees";
// compatibility C47–C48): every valid message is also fed split at every byte boundary and byte by
// byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proxy/protocol/socks5.hpp"

namespace pisandbox::proxy {
namespace {

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

// Feeds `chunks` in order; returns the result and the bytes left after the message.
template <typename Parser, typename Message>
std::pair<std::variant<SocksNeedMore, Message, SocksError>, std::string> feed(
    const std::vector<std::string_view>& chunks) {
  Parser parser;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    auto result = parser.feed(chunks[i]);
    if (auto* message = std::get_if<Message>(&result)) {
      std::string rest(chunks[i].substr(message->consumed));
      for (std::size_t j = i + 1; j < chunks.size(); ++j) rest += chunks[j];
      return {result, rest};
    }
    if (std::holds_alternative<SocksError>(result)) return {result, ""};
  }
  return {SocksNeedMore{}, ""};
}

// All splittings of `message` into two parts, and byte by byte.
std::vector<std::vector<std::string_view>> splittings(std::string_view message) {
  std::vector<std::vector<std::string_view>> out;
  for (std::size_t k = 0; k <= message.size(); ++k) {
    out.push_back({message.substr(0, k), message.substr(k)});
  }
  std::vector<std::string_view> one_by_one;
  for (std::size_t k = 0; k < message.size(); ++k) one_by_one.push_back(message.substr(k, 1));
  out.push_back(one_by_one);
  return out;
}

TEST(SocksGreetingParser, ParsesAcrossEverySplit) {
  const std::string message = bytes({5, 3, 0, 1, 2}) + bytes({5, 1, 0, 3});
  for (const auto& chunks : splittings(message)) {
    const auto [result, rest] = feed<SocksGreetingParser, SocksGreeting>(chunks);
    ASSERT_TRUE(std::holds_alternative<SocksGreeting>(result));
    EXPECT_EQ(std::get<SocksGreeting>(result).methods, (std::vector<std::uint8_t>{0, 1, 2}));
    EXPECT_EQ(rest, bytes({5, 1, 0, 3}));
  }
}

TEST(SocksGreetingParser, TruncatedNeedsMore) {
  EXPECT_TRUE(std::holds_alternative<SocksNeedMore>(SocksGreetingParser().feed(bytes({5}))));
  EXPECT_TRUE(std::holds_alternative<SocksNeedMore>(SocksGreetingParser().feed(bytes({5, 2, 0}))));
}

TEST(SocksGreetingParser, RefusesOtherVersionsAndNoMethods) {
  auto result = SocksGreetingParser().feed(bytes({4, 1, 0, 80, 127, 0, 0, 1, 0}));
  ASSERT_TRUE(std::holds_alternative<SocksError>(result));
  EXPECT_EQ(std::get<SocksError>(result), (SocksError{std::nullopt, "not SOCKS version 5"}));
  result = SocksGreetingParser().feed("GET / HTTP/1.1\r\n");
  EXPECT_TRUE(std::holds_alternative<SocksError>(result));
  result = SocksGreetingParser().feed(bytes({5, 0}));
  EXPECT_EQ(std::get<SocksError>(result),
            (SocksError{std::nullopt, "no authentication methods offered"}));
}

TEST(SocksMethods, NoAuthenticationOrNothing) {
  EXPECT_EQ(select_method({2, 0}), kMethodNoAuth);
  EXPECT_EQ(select_method({2}), kMethodNoneAcceptable);
  EXPECT_EQ(select_method({}), kMethodNoneAcceptable);
  EXPECT_EQ(method_reply(kMethodNoAuth), (std::array<std::uint8_t, 2>{5, 0}));
  EXPECT_EQ(method_reply(kMethodNoneAcceptable), (std::array<std::uint8_t, 2>{5, 0xff}));
}

TEST(SocksMethods, WithACredentialOnlyUsernamePassword) {
  EXPECT_EQ(select_method({0, 2}, SocksAuth::UserPass), kMethodUserPass);
  EXPECT_EQ(select_method({0}, SocksAuth::UserPass), kMethodNoneAcceptable);
  EXPECT_EQ(select_method({1, 0x80}, SocksAuth::UserPass), kMethodNoneAcceptable);
  EXPECT_EQ(select_method({2}, SocksAuth::None), kMethodNoneAcceptable);
  EXPECT_EQ(userpass_reply(true), (std::array<std::uint8_t, 2>{1, 0}));
  EXPECT_EQ(userpass_reply(false), (std::array<std::uint8_t, 2>{1, 1}));
}

TEST(SocksUserPassParser, ParsesAcrossEverySplit) {
  const std::string user = "pi-sandbox";
  const std::string password(255, 'p');
  const std::string message = bytes({1, static_cast<int>(user.size())}) + user +
                              bytes({static_cast<int>(password.size())}) + password +
                              bytes({5, 1, 0, 3});
  for (const auto& chunks : splittings(message)) {
    const auto [result, rest] = feed<SocksUserPassParser, SocksUserPass>(chunks);
    ASSERT_TRUE(std::holds_alternative<SocksUserPass>(result));
    EXPECT_EQ(std::get<SocksUserPass>(result).username, user);
    EXPECT_EQ(std::get<SocksUserPass>(result).password, password);
    EXPECT_EQ(rest, bytes({5, 1, 0, 3}));
  }
}

TEST(SocksUserPassParser, EmptyFieldsParseTruncatedNeedsMoreOtherVersionsFail) {
  const auto empty = SocksUserPassParser().feed(bytes({1, 0, 0}));
  ASSERT_TRUE(std::holds_alternative<SocksUserPass>(empty));
  EXPECT_EQ(std::get<SocksUserPass>(empty).username, "");
  EXPECT_EQ(std::get<SocksUserPass>(empty).password, "");
  EXPECT_EQ(std::get<SocksUserPass>(empty).consumed, 3u);
  EXPECT_TRUE(std::holds_alternative<SocksNeedMore>(SocksUserPassParser().feed(bytes({1}))));
  EXPECT_TRUE(
      std::holds_alternative<SocksNeedMore>(SocksUserPassParser().feed(bytes({1, 2, 'a', 'b'}))));
  EXPECT_TRUE(std::holds_alternative<SocksNeedMore>(
      SocksUserPassParser().feed(bytes({1, 1, 'a', 2, 'b'}))));
  const auto other = SocksUserPassParser().feed(bytes({5, 1, 0}));
  ASSERT_TRUE(std::holds_alternative<SocksError>(other));
  EXPECT_EQ(std::get<SocksError>(other),
            (SocksError{std::nullopt, "not the username/password sub-negotiation version 1"}));
}

TEST(SocksRequestParser, DomainNameAcrossEverySplit) {
  const std::string message =
      bytes({5, 1, 0, 3, 11}) + "example.com" + bytes({0x01, 0xbb}) + "SSH-2.0-x\r\n";
  for (const auto& chunks : splittings(message)) {
    const auto [result, rest] = feed<SocksRequestParser, SocksRequest>(chunks);
    ASSERT_TRUE(std::holds_alternative<SocksRequest>(result));
    const auto& request = std::get<SocksRequest>(result);
    EXPECT_EQ(request.command, 1);
    EXPECT_EQ(request.address_type, 3);
    EXPECT_EQ(request.host, "example.com");
    EXPECT_EQ(request.port, 443);
    EXPECT_EQ(rest, "SSH-2.0-x\r\n");
  }
}

TEST(SocksRequestParser, Ipv4AndIpv6AcrossEverySplit) {
  const std::string v4 = bytes({5, 1, 0, 1, 127, 0, 0, 1, 0, 80});
  for (const auto& chunks : splittings(v4)) {
    const auto [result, rest] = feed<SocksRequestParser, SocksRequest>(chunks);
    const auto& request = std::get<SocksRequest>(result);
    EXPECT_EQ(request.address, IpAddress::v4({127, 0, 0, 1}));
    EXPECT_EQ(request.host, "127.0.0.1");
    EXPECT_EQ(request.port, 80);
    EXPECT_EQ(rest, "");
  }
  const std::string v6 =
      bytes({5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0x1f, 0x90});
  for (const auto& chunks : splittings(v6)) {
    const auto [result, rest] = feed<SocksRequestParser, SocksRequest>(chunks);
    const auto& request = std::get<SocksRequest>(result);
    EXPECT_EQ(request.address_type, 4);
    EXPECT_EQ(request.host, "::ffff:127.0.0.1");
    EXPECT_EQ(request.port, 8080);
  }
}

TEST(SocksRequestParser, BindAndUdpParseSoTheCallerCanAnswer0x07) {
  auto result = SocksRequestParser().feed(bytes({5, 2, 0, 3, 1, 'x', 0, 1}));
  EXPECT_EQ(std::get<SocksRequest>(result).command, 2);
  result = SocksRequestParser().feed(bytes({5, 3, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(std::get<SocksRequest>(result).command, 3);
}

TEST(SocksRequestParser, Errors) {
  const std::vector<std::pair<std::string, SocksError>> cases = {
      {bytes({4, 1, 0, 1}), {SocksReply::GeneralFailure, "request is not SOCKS version 5"}},
      {bytes({5, 1, 1, 1}), {SocksReply::GeneralFailure, "reserved byte is not 0"}},
      {bytes({5, 1, 0, 2}), {SocksReply::AddressTypeNotSupported, "unknown address type"}},
      {bytes({5, 1, 0, 0}), {SocksReply::AddressTypeNotSupported, "unknown address type"}},
      {bytes({5, 1, 0, 3, 0, 0, 80}), {SocksReply::GeneralFailure, "empty domain name"}},
  };
  for (const auto& [message, error] : cases) {
    for (const auto& chunks : splittings(message)) {
      const auto [result, rest] = feed<SocksRequestParser, SocksRequest>(chunks);
      ASSERT_TRUE(std::holds_alternative<SocksError>(result));
      EXPECT_EQ(std::get<SocksError>(result), error);
    }
  }
  EXPECT_TRUE(std::holds_alternative<SocksNeedMore>(
      SocksRequestParser().feed(bytes({5, 1, 0, 3, 200}) + std::string(150, 'a'))));
}

TEST(SocksReplies, AreTenBytes) {
  EXPECT_EQ(socks_reply(SocksReply::Succeeded),
            (std::array<std::uint8_t, 10>{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(socks_reply(SocksReply::NotAllowed),
            (std::array<std::uint8_t, 10>{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(socks_reply(SocksReply::CommandNotSupported)[1], 7);
  EXPECT_EQ(socks_reply(SocksReply::HostUnreachable)[1], 4);
  EXPECT_EQ(socks_reply(SocksReply::AddressTypeNotSupported)[1], 8);
}

}  // namespace
}  // namespace pisandbox::proxy
