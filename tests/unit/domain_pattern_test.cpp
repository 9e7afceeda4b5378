// policy::DomainPattern: validation, canonical text and matching (compatibility C10–C12,
// docs/cases.md, C-05, C-07, C-09).
#include "policy/domain_pattern.hpp"

#include <gtest/gtest.h>

#include <string>

namespace pisandbox::policy {
namespace {

struct Valid {
  std::string entry;
  ListKind list;
  std::string text;
};

class DomainPatternValid : public testing::TestWithParam<Valid> {};

TEST_P(DomainPatternValid, CanonicalisesAndRoundTrips) {
  const Valid& c = GetParam();
  auto pattern = DomainPattern::parse(c.entry, c.list);
  ASSERT_TRUE(pattern.has_value()) << c.entry << ": " << pattern.error();
  EXPECT_EQ(pattern->text(), c.text);
  auto again = DomainPattern::parse(pattern->text(), c.list);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *pattern);
}

INSTANTIATE_TEST_SUITE_P(
    Entries, DomainPatternValid,
    testing::Values(
        Valid{"example.com", ListKind::Allowed, "example.com"},
        Valid{"EXAMPLE.COM", ListKind::Allowed, "example.com"},       // docs/cases.md, C-07
        Valid{"example.com.", ListKind::Allowed, "example.com"},      // docs/cases.md, C-07
        Valid{"  github.com\t", ListKind::Allowed, "github.com"},     // trimmed
        Valid{"*.example.com", ListKind::Allowed, "*.example.com"},   // docs/cases.md, C-07
        Valid{"*.EXAMPLE.com.", ListKind::Allowed, "*.example.com"},  //
        Valid{"*.npmjs.org:443", ListKind::Allowed, "*.npmjs.org:443"},
        Valid{"example.com:443", ListKind::Allowed, "example.com:443"},  // docs/cases.md, C-05
        Valid{"example.com.:443", ListKind::Allowed, "example.com:443"},
        Valid{"example.com:1", ListKind::Allowed, "example.com:1"},
        Valid{"example.com:65535", ListKind::Allowed, "example.com:65535"},
        Valid{"xn--bcher-kva.example", ListKind::Allowed, "xn--bcher-kva.example"},
        Valid{"a-b.c0.example", ListKind::Allowed, "a-b.c0.example"},
        Valid{"1password.com", ListKind::Allowed, "1password.com"},
        Valid{"*", ListKind::Denied, "*"}, Valid{" * ", ListKind::Denied, "*"},
        Valid{"*:8080", ListKind::Denied, "*:8080"},
        Valid{"*.example.com", ListKind::Denied, "*.example.com"}));

struct Invalid {
  std::string entry;
  ListKind list;
  std::string reason;
};

class DomainPatternInvalid : public testing::TestWithParam<Invalid> {};

TEST_P(DomainPatternInvalid, NamesTheReason) {
  const Invalid& c = GetParam();
  auto pattern = DomainPattern::parse(c.entry, c.list);
  ASSERT_FALSE(pattern.has_value()) << c.entry << " parsed as " << pattern->text();
  EXPECT_EQ(pattern.error(), c.reason) << c.entry;
}

const std::string kBadChar = "has a character other than a-z, 0-9, '-' and '.'";
const std::string kBadPort = "has a port that is not a number between 1 and 65535";

INSTANTIATE_TEST_SUITE_P(
    Entries, DomainPatternInvalid,
    testing::Values(
        Invalid{"", ListKind::Allowed, "is empty"}, Invalid{"   ", ListKind::Denied, "is empty"},
        Invalid{"github.com/example-org/*", ListKind::Allowed,
                "has a path"},  // docs/cases.md, C-07
        Invalid{"https://github.com", ListKind::Allowed, "has a scheme (like https:// or unix://)"},
        Invalid{"unix:///var/run/docker.sock", ListKind::Denied,  // docs/cases.md, C-09
                "has a scheme (like https:// or unix://)"},
        Invalid{"example.com?x=1", ListKind::Allowed, "has a query"},
        Invalid{"example.com#x", ListKind::Allowed, "has a fragment"},
        Invalid{"user@example.com", ListKind::Allowed, "has user information"},
        Invalid{"127.0.0.1", ListKind::Allowed, "is an IP address"},
        Invalid{"127.0.0.1:80", ListKind::Denied, "is an IP address"},
        Invalid{"127.1", ListKind::Allowed, "is an IP address"},
        Invalid{"1.0x7f", ListKind::Allowed, "is an IP address"},
        Invalid{"[::1]", ListKind::Allowed, "is an IP literal"},
        Invalid{"[::1]:443", ListKind::Allowed, "is an IP literal"},
        Invalid{"::1", ListKind::Allowed, "is an IPv6 literal or has a misplaced port"},
        Invalid{"fe80::1", ListKind::Denied, "is an IPv6 literal or has a misplaced port"},
        Invalid{"example.com:443:80", ListKind::Allowed,
                "is an IPv6 literal or has a misplaced port"},
        Invalid{"example.com:0443", ListKind::Allowed, "has a port with a leading zero or port 0"},
        Invalid{"example.com:0", ListKind::Allowed, "has a port with a leading zero or port 0"},
        Invalid{"example.com:65536", ListKind::Allowed, kBadPort},
        Invalid{"example.com:99999", ListKind::Allowed, kBadPort},
        Invalid{"example.com:123456", ListKind::Allowed, kBadPort},
        Invalid{"example.com:https", ListKind::Allowed, kBadPort},
        Invalid{"example.com:-1", ListKind::Allowed, kBadPort},
        Invalid{"example.com:", ListKind::Allowed, "has an empty port"},
        Invalid{":443", ListKind::Allowed, "has a port but no host"},
        Invalid{"443:example.com", ListKind::Allowed, kBadPort},
        Invalid{"*", ListKind::Allowed, "is a bare '*', which only deniedDomains accepts"},
        Invalid{"*:443", ListKind::Allowed, "is a bare '*', which only deniedDomains accepts"},
        Invalid{"*example.com", ListKind::Allowed,
                "has a '*' other than a leading '*.' or a bare '*'"},
        Invalid{"a.*.example.com", ListKind::Denied,
                "has a '*' other than a leading '*.' or a bare '*'"},
        Invalid{"*.*.example.com", ListKind::Denied,
                "has a '*' other than a leading '*.' or a bare '*'"},
        Invalid{"**", ListKind::Denied, "has a '*' other than a leading '*.' or a bare '*'"},
        Invalid{"*.", ListKind::Denied, "has no domain"},
        Invalid{"*.com", ListKind::Denied,
                "has no '.' (single-label names like localhost are not accepted)"},
        Invalid{"localhost", ListKind::Allowed,
                "has no '.' (single-label names like localhost are not accepted)"},
        Invalid{"example.com..", ListKind::Allowed, "has an empty label"},
        Invalid{".example.com", ListKind::Allowed, "has an empty label"},
        Invalid{"a..example.com", ListKind::Allowed, "has an empty label"},
        Invalid{"-a.example.com", ListKind::Allowed, "has a label that starts or ends with '-'"},
        Invalid{"a-.example.com", ListKind::Allowed, "has a label that starts or ends with '-'"},
        Invalid{"under_score.example.com", ListKind::Allowed, kBadChar},
        Invalid{std::string("b\xc3\xbc") + "cher.example", ListKind::Allowed, kBadChar},
        Invalid{"exa mple.com", ListKind::Allowed, kBadChar},
        Invalid{std::string(64, 'a') + ".com", ListKind::Allowed,
                "has a label longer than 63 characters"},
        Invalid{std::string(std::string(63, 'a') + ".") + std::string(63, 'b') + "." +
                    std::string(63, 'c') + "." + std::string(61, 'd') + ".com",
                ListKind::Allowed, "has a domain longer than 253 characters"}));

TEST(DomainPattern, LongestAcceptedDomainIs253Characters) {
  const std::string domain = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                             std::string(63, 'c') + "." + std::string(57, 'd') + ".com";
  ASSERT_EQ(domain.size(), 253u);
  EXPECT_TRUE(DomainPattern::parse(domain, ListKind::Allowed).has_value());
  EXPECT_TRUE(DomainPattern::parse(domain + ".", ListKind::Allowed).has_value());
}

TEST(DomainPattern, Accessors) {
  auto pattern = DomainPattern::parse("*.Example.com:443", ListKind::Allowed);
  ASSERT_TRUE(pattern.has_value());
  EXPECT_EQ(pattern->kind(), DomainPattern::Kind::Subdomains);
  EXPECT_EQ(pattern->domain(), "example.com");
  EXPECT_EQ(pattern->port(), std::optional<std::uint16_t>(443));
  auto any = DomainPattern::parse("*", ListKind::Denied);
  ASSERT_TRUE(any.has_value());
  EXPECT_EQ(any->kind(), DomainPattern::Kind::Any);
  EXPECT_EQ(any->domain(), "");
  EXPECT_EQ(any->port(), std::nullopt);
}

struct Match {
  std::string pattern;
  std::string host;
  std::uint16_t port;
  bool matches;
};

class DomainPatternMatch : public testing::TestWithParam<Match> {};

TEST_P(DomainPatternMatch, Decides) {
  const Match& c = GetParam();
  auto pattern = DomainPattern::parse(c.pattern, ListKind::Denied);
  ASSERT_TRUE(pattern.has_value()) << c.pattern;
  EXPECT_EQ(pattern->matches(c.host, c.port), c.matches)
      << c.pattern << " vs " << c.host << ":" << c.port;
}

INSTANTIATE_TEST_SUITE_P(
    CaseC07, DomainPatternMatch,
    testing::Values(Match{"example.com", "example.com", 443, true},
                    Match{"example.com", "EXAMPLE.COM", 443, true},
                    Match{"example.com", "example.com.", 443, true},
                    Match{"EXAMPLE.COM", "example.com", 80, true},
                    Match{"example.com.", "example.com", 80, true},
                    Match{"example.com", "a.example.com", 443, false},
                    Match{"example.com", "notexample.com", 443, false},
                    Match{"example.com", "example.com.evil.test", 443, false},
                    Match{"example.com", "example.co", 443, false},
                    Match{"*.example.com", "a.example.com", 443, true},
                    Match{"*.example.com", "a.b.example.com", 443, true},
                    Match{"*.example.com", "A.B.Example.COM.", 443, true},
                    Match{"*.example.com", "example.com", 443, false},  // never the apex
                    Match{"*.example.com", ".example.com", 443, false},
                    Match{"*.example.com", "notexample.com", 443, false},
                    Match{"*.example.com", "a.notexample.com", 443, false},
                    Match{"*.example.com", "example.com.evil.test", 443, false},
                    Match{"*.example.com", "a.example.com.evil.test", 443, false},
                    Match{"*.example.com", "evil/.example.com", 443, false},
                    Match{"*.example.com", "a..example.com", 443, false},
                    Match{"*.example.com", "_svc.example.com", 443, true},
                    Match{"*", "anything.test", 1, true}, Match{"*", "127.0.0.1", 22, true},
                    Match{"*", "::1", 22, true}));

INSTANTIATE_TEST_SUITE_P(CaseC05Ports, DomainPatternMatch,
                         testing::Values(Match{"example.com:443", "example.com", 443, true},
                                         Match{"example.com:443", "example.com", 9999, false},
                                         Match{"example.com", "example.com", 9999, true},
                                         Match{"*.npmjs.org:443", "registry.npmjs.org", 443, true},
                                         Match{"*.npmjs.org:443", "registry.npmjs.org", 80, false},
                                         Match{"*:22", "github.com", 22, true},
                                         Match{"*:22", "github.com", 443, false}));

}  // namespace
}  // namespace pisandbox::policy
