// The per-command proxy credential (proxy/protocol/credential.hpp; docs/macos.md): its form, the
// Proxy-Authorization check (RFC 9110 section 11.7.1, RFC 7617 section 2) and base64 (RFC 4648
// section 10's test vectors).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "proxy/protocol/credential.hpp"

namespace pisandbox::proxy {
namespace {

TEST(Base64, Rfc4648TestVectors) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foob"), "Zm9vYg==");
  EXPECT_EQ(base64("fooba"), "Zm9vYmE=");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  // RFC 7617 section 2's example.
  EXPECT_EQ(base64("Aladdin:open sesame"), "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
}

TEST(ProxyCredential, IsPiSandboxAnd32LowercaseHexDigitsFreshEachTime) {
  std::set<std::string> passwords;
  for (int i = 0; i < 64; ++i) {
    const ProxyCredential credential = generate_credential();
    EXPECT_EQ(credential.username, "pi-sandbox");
    ASSERT_EQ(credential.password.size(), 32u);
    EXPECT_EQ(credential.password.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_EQ(userinfo(credential), "pi-sandbox:" + credential.password);
    passwords.insert(credential.password);
  }
  EXPECT_EQ(passwords.size(), 64u);
}

TEST(ConstantTimeEqual, ComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_FALSE(constant_time_equal("abc", std::string_view("abc\0", 4)));
}

TEST(ProxyAuthorization, ExactlyOneBasicFieldWithTheCanonicalToken) {
  const ProxyCredential credential{"pi-sandbox", "00112233445566778899aabbccddeeff"};
  const std::string token = base64("pi-sandbox:00112233445566778899aabbccddeeff");
  const auto matches = [&](std::vector<Header> headers) {
    return proxy_authorization_matches(headers, credential);
  };
  EXPECT_TRUE(matches({{"Proxy-Authorization", "Basic " + token}}));
  EXPECT_TRUE(matches({{"Host", "x"}, {"proxy-AUTHORIZATION", "bASIC " + token}}));
  EXPECT_TRUE(matches({{"Proxy-Authorization", "Basic    " + token}}));
  EXPECT_FALSE(matches({}));
  EXPECT_FALSE(matches({{"Authorization", "Basic " + token}}));
  EXPECT_FALSE(matches(
      {{"Proxy-Authorization", "Basic " + token}, {"Proxy-Authorization", "Basic " + token}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basic"}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basic "}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basic\t" + token}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basics " + token}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Bearer " + token}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basic " + token + " "}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basic " + token.substr(0, token.size() - 1)}}));
  EXPECT_FALSE(matches({{"Proxy-Authorization", "Basic " + base64("pi-sandbox:")}}));
  EXPECT_FALSE(matches(
      {{"Proxy-Authorization", "Basic " + base64("pi-sandbox:00112233445566778899aabbccddeefe")}}));
}

TEST(ProxyAuthorization, The407AsksForBasicAndCloses) {
  EXPECT_EQ(proxy_authentication_required_response(),
            "HTTP/1.1 407 Proxy Authentication Required\r\n"
            "Proxy-Authenticate: Basic realm=\"pi-sandbox\"\r\n"
            "Content-Type: text/plain\r\nContent-Length: 60\r\nConnection: close\r\n\r\n"
            "this proxy needs the credential in the command's proxy URLs\n");
}

}  // namespace
}  // namespace pisandbox::proxy
