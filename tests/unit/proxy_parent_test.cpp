// proxy::parse_parent_proxy_url, NoProxy, ParentProxies (docs/network.md, "A parent proxy";
// RFC 9110 section 9.3.6, RFC 7617; curl's proxy variables).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proxy/protocol/parent_proxy.hpp"

namespace pisandbox::proxy {
namespace {

// ---- parse_parent_proxy_url ------------------------------------------------------------------

TEST(ParentProxyUrl, HostAndPort) {
  const auto parent = parse_parent_proxy_url("http://proxy.corp.example:3128");
  ASSERT_TRUE(parent.has_value()) << parent.error();
  EXPECT_EQ(parent->host, "proxy.corp.example");
  EXPECT_EQ(parent->port, 3128);
  EXPECT_FALSE(parent->user.has_value());
  EXPECT_EQ(parent->display(), "http://proxy.corp.example:3128");
  EXPECT_EQ(parent->authorization(), "");
}

TEST(ParentProxyUrl, WithoutSchemePortOrWithAPathAsCurlReadsIt) {
  auto parent = parse_parent_proxy_url("  Proxy.Corp:8080/  ");
  ASSERT_TRUE(parent.has_value()) << parent.error();
  EXPECT_EQ(parent->display(), "http://proxy.corp:8080");
  parent = parse_parent_proxy_url("HTTP://10.1.2.3");
  ASSERT_TRUE(parent.has_value()) << parent.error();
  EXPECT_EQ(parent->display(), "http://10.1.2.3:1080");
  parent = parse_parent_proxy_url("http://[fd00::1]:3128/ignored?x#y");
  ASSERT_TRUE(parent.has_value()) << parent.error();
  EXPECT_EQ(parent->host, "fd00::1");
  EXPECT_EQ(parent->display(), "http://[fd00::1]:3128");
}

TEST(ParentProxyUrl, CredentialsArePercentDecodedAndSentAsBasic) {
  const auto parent = parse_parent_proxy_url("http://alice:p%40ss%3Aw%20rd@proxy.corp:3128");
  ASSERT_TRUE(parent.has_value()) << parent.error();
  ASSERT_TRUE(parent->user.has_value());
  EXPECT_EQ(*parent->user, "alice");
  EXPECT_EQ(parent->password, "p@ss:w rd");
  // base64("alice:p@ss:w rd") (RFC 7617 section 2).
  EXPECT_EQ(parent->authorization(), "Basic YWxpY2U6cEBzczp3IHJk");
  EXPECT_EQ(parent->display(), "http://proxy.corp:3128");
  // RFC 7617's own example.
  const auto example = parse_parent_proxy_url("Aladdin:open%20sesame@p.example");
  ASSERT_TRUE(example.has_value());
  EXPECT_EQ(example->authorization(), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
}

TEST(ParentProxyUrl, AUserWithoutPasswordSendsAnEmptyOne) {
  const auto parent = parse_parent_proxy_url("http://bob@proxy.corp:1");
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->authorization(), "Basic Ym9iOg==");  // "bob:"
}

TEST(ParentProxyUrl, ConnectRequest) {
  auto parent = parse_parent_proxy_url("http://proxy.corp:3128");
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->connect_request("example.com", 443),
            "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
  parent = parse_parent_proxy_url("http://a:b@proxy.corp:3128");
  ASSERT_TRUE(parent.has_value());
  EXPECT_EQ(parent->connect_request("example.com", 80),
            "CONNECT example.com:80 HTTP/1.1\r\nHost: example.com:80\r\n"
            "Proxy-Authorization: Basic YTpi\r\n\r\n");
}

struct BadUrl {
  std::string url;
  std::string reason;
};

class ParentProxyUrlBad : public testing::TestWithParam<BadUrl> {};

TEST_P(ParentProxyUrlBad, IsRefusedWithItsReason) {
  const auto parent = parse_parent_proxy_url(GetParam().url);
  ASSERT_FALSE(parent.has_value()) << GetParam().url;
  EXPECT_EQ(parent.error(), GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Urls, ParentProxyUrlBad,
    testing::Values(
        BadUrl{"", "is empty"}, BadUrl{"  ", "is empty"},
        BadUrl{"socks5h://proxy:1080",
               "uses the scheme socks5h; only http:// parent proxies are supported"},
        BadUrl{"https://proxy:443",
               "uses the scheme https; only http:// parent proxies are supported"},
        BadUrl{"http://", "has no host"}, BadUrl{"http://user:pw@", "has no host"},
        BadUrl{"http://proxy:0", "has a port that is not a number between 1 and 65535"},
        BadUrl{"http://proxy:99999", "has a port that is not a number between 1 and 65535"},
        BadUrl{"http://proxy:", "has an empty port"},
        BadUrl{"http://pro\r\nxy:1", "has a bad host"}, BadUrl{"http://[::1:1", "has a bad host"},
        BadUrl{"http://[zz]:1", "has a bad host"},
        BadUrl{"http://a:%zz@proxy:1", "has a bad percent-encoding in its user information"},
        BadUrl{"http://a:%4@proxy:1", "has a bad percent-encoding in its user information"}));

// ---- NoProxy ---------------------------------------------------------------------------------

TEST(NoProxy, DomainsMatchThemselvesAndNamesBelowAsInCurl) {
  const NoProxy list =
      NoProxy::parse("corp.example, .internal.example,*.svc.example , Mixed.Case.");
  EXPECT_EQ(list.domains(), (std::vector<std::string>{"corp.example", "internal.example",
                                                      "svc.example", "mixed.case"}));
  EXPECT_TRUE(list.matches("corp.example"));
  EXPECT_TRUE(list.matches("git.corp.example"));
  EXPECT_TRUE(list.matches("internal.example"));
  EXPECT_TRUE(list.matches("a.b.internal.example"));
  EXPECT_TRUE(list.matches("x.svc.example"));
  EXPECT_TRUE(list.matches("mixed.case"));
  EXPECT_FALSE(list.matches("notcorp.example"));
  EXPECT_FALSE(list.matches("corp.example.org"));
  EXPECT_FALSE(list.matches("example"));
  EXPECT_FALSE(list.all());
}

TEST(NoProxy, AddressesRangesAndPortsCanNeverMatchAName) {
  const NoProxy list = NoProxy::parse("localhost,127.0.0.1,::1,10.0.0.0/8,[fd00::1],web.test:8080");
  EXPECT_EQ(list.domains(), std::vector<std::string>{"localhost"});
  EXPECT_EQ(list.ignored(), (std::vector<std::string>{"127.0.0.1", "::1", "10.0.0.0/8", "[fd00::1]",
                                                      "web.test:8080"}));
  EXPECT_FALSE(list.matches("web.test"));
}

TEST(NoProxy, StarMatchesEverything) {
  EXPECT_TRUE(NoProxy::parse("*").matches("example.com"));
  EXPECT_TRUE(NoProxy::parse("a.example, *").all());
  EXPECT_FALSE(NoProxy::parse("").matches("example.com"));
  EXPECT_FALSE(NoProxy::parse(" , ,").matches("example.com"));
}

TEST(NoProxy, NonAsciiEntriesAreConvertedLikeDestinations) {
  const NoProxy list = NoProxy::parse(
      "b\xc3\xbc"
      "cher.example");
  EXPECT_TRUE(list.matches("xn--bcher-kva.example"));
}

// ---- ParentProxies ---------------------------------------------------------------------------

TEST(ParentProxies, LowercaseBeforeUppercaseThenAllProxy) {
  const std::vector<std::string> env = {"HTTPS_PROXY=http://upper:1", "https_proxy=http://lower:2",
                                        "ALL_PROXY=http://all:3", "PATH=/bin"};
  const ParentProxies parents = parent_proxies_from_environment(env);
  ASSERT_TRUE(parents.tunnel.has_value());
  EXPECT_EQ(parents.tunnel->variable, "https_proxy");
  EXPECT_EQ(parents.tunnel->proxy->display(), "http://lower:2");
  ASSERT_TRUE(parents.plain.has_value());
  EXPECT_EQ(parents.plain->variable, "ALL_PROXY");
  EXPECT_EQ(parents.plain->proxy->display(), "http://all:3");
  EXPECT_TRUE(parents.any());
}

TEST(ParentProxies, EmptyValuesAreUnsetAndTheFirstEntryOfANameCounts) {
  const std::vector<std::string> env = {"https_proxy=", "HTTPS_PROXY=http://first:1",
                                        "HTTPS_PROXY=http://second:2", "HTTP_PROXY= "};
  const ParentProxies parents = parent_proxies_from_environment(env);
  ASSERT_TRUE(parents.tunnel.has_value());
  EXPECT_EQ(parents.tunnel->variable, "HTTPS_PROXY");
  EXPECT_EQ(parents.tunnel->proxy->display(), "http://first:1");
  EXPECT_FALSE(parents.plain.has_value());
}

TEST(ParentProxies, NoneConfigured) {
  const std::vector<std::string> env = {"NO_PROXY=example.com", "HTTPS_PROXYX=http://x:1"};
  const ParentProxies parents = parent_proxies_from_environment(env);
  EXPECT_FALSE(parents.any());
  EXPECT_EQ(parents.route("a.example.org", ParentUse::Tunnel), nullptr);
  EXPECT_EQ(parents.no_proxy_variable, "NO_PROXY");
}

TEST(ParentProxies, RouteHonoursNoProxyAndTheUse) {
  const std::vector<std::string> env = {"HTTPS_PROXY=http://p:1", "no_proxy=corp.example",
                                        "NO_PROXY=other.example"};
  const ParentProxies parents = parent_proxies_from_environment(env);
  EXPECT_EQ(parents.no_proxy_variable, "no_proxy");
  const ParentSetting* via = parents.route("example.org", ParentUse::Tunnel);
  ASSERT_NE(via, nullptr);
  EXPECT_EQ(via->variable, "HTTPS_PROXY");
  EXPECT_EQ(parents.route("git.corp.example", ParentUse::Tunnel), nullptr);
  EXPECT_NE(parents.route("other.example", ParentUse::Tunnel), nullptr);
  EXPECT_EQ(parents.route("example.org", ParentUse::PlainHttp), nullptr);  // no HTTP_PROXY
}

TEST(ParentProxies, AnUnusableValueIsKeptWithItsReason) {
  const std::vector<std::string> env = {"ALL_PROXY=socks5://p:1080"};
  const ParentProxies parents = parent_proxies_from_environment(env);
  ASSERT_TRUE(parents.tunnel.has_value());
  ASSERT_FALSE(parents.tunnel->proxy.has_value());
  EXPECT_EQ(parents.tunnel->proxy.error(),
            "uses the scheme socks5; only http:// parent proxies are supported");
  EXPECT_NE(parents.route("example.org", ParentUse::Tunnel), nullptr);
}

}  // namespace
}  // namespace pisandbox::proxy
