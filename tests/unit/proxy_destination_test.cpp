// proxy::normalise_host, parse_authority, the public-address classifier and the
// host-interface check (docs/network.md, "Deciding a destination", steps 1 and 3; compatibility
// C37–C39, C40; docs/cases.md, C-05, C-07, C-13).
#include <gtest/gtest.h>

#if defined(__linux__)
#include <dlfcn.h>
#endif

#include <cstdlib>
#include <string>
#include <vector>

#include "policy/domain_pattern.hpp"
#include "proxy/protocol/address.hpp"
#include "proxy/protocol/destination.hpp"

namespace pisandbox::proxy {
namespace {

// ---- normalise_host --------------------------------------------------------------------------

struct Normalised {
  std::string input;
  std::string host;
};

class NormaliseHostValid : public testing::TestWithParam<Normalised> {};

TEST_P(NormaliseHostValid, GivesTheAsciiName) {
  const auto& c = GetParam();
  const auto host = normalise_host(c.input);
  ASSERT_TRUE(host.has_value()) << c.input << ": " << host.error();
  EXPECT_EQ(*host, c.host);
  // Normalising is idempotent.
  EXPECT_EQ(normalise_host(*host).value_or("?"), c.host);
}

INSTANTIATE_TEST_SUITE_P(
    Names, NormaliseHostValid,
    testing::Values(
        Normalised{"example.com", "example.com"}, Normalised{"EXAMPLE.COM", "example.com"},
        Normalised{"example.com.", "example.com"}, Normalised{" \texample.com \r\n", "example.com"},
        Normalised{"b\xc3\xbc"
                   "cher.example",
                   "xn--bcher-kva.example"},
        Normalised{"B\xc3\x9c"
                   "CHER.example",
                   "xn--bcher-kva.example"},
        Normalised{"xn--bcher-kva.example", "xn--bcher-kva.example"},
        // Full-width letters map to ASCII (UTS #46).
        Normalised{"\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81\xef\xbd\x8d\xef\xbd\x90"
                   "\xef\xbd\x8c\xef\xbd\x85.com",
                   "example.com"},
        // Near misses of allowlist patterns are ordinary names here (docs/cases.md, C-07).
        Normalised{"example.com.evil.test", "example.com.evil.test"},
        Normalised{"notexample.com", "notexample.com"},
        Normalised{"a-b.c0.example", "a-b.c0.example"},
        Normalised{"1password.com", "1password.com"},
        Normalised{"127.0.0.1.example.com", "127.0.0.1.example.com"},
        Normalised{"example.0x7g", "example.0x7g"},
        Normalised{"a.b.c.d.example.org.", "a.b.c.d.example.org"}));

struct Refused {
  std::string input;
  std::string reason;
};

class NormaliseHostRefused : public testing::TestWithParam<Refused> {};

TEST_P(NormaliseHostRefused, NamesTheReason) {
  const auto& c = GetParam();
  const auto host = normalise_host(c.input);
  ASSERT_FALSE(host.has_value()) << c.input << " normalised to " << *host;
  EXPECT_EQ(host.error(), c.reason) << c.input;
}

const std::string kIp = "is an IP address literal";
const std::string kBadChar = "has a character other than a-z, 0-9, '-' and '.'";
const std::string kSingle = "is a single label (like localhost), not a domain name";

INSTANTIATE_TEST_SUITE_P(
    IpLiterals, NormaliseHostRefused,
    testing::Values(
        // docs/network.md, "Deciding a destination" and docs/cases.md, C-13: every spelling of an
        // address.
        Refused{"127.0.0.1", kIp}, Refused{"127.1", kIp}, Refused{"2130706433", kIp},
        Refused{"0x7f.1", kIp}, Refused{"0X7F.1", kIp}, Refused{"0177.0.0.1", kIp},
        Refused{"0x7f000001", kIp}, Refused{"127.0.0.1.", kIp}, Refused{"1.2.3.4", kIp},
        Refused{"8.8.8.8", kIp}, Refused{"example.0x1f", kIp}, Refused{"example.123", kIp},
        Refused{"[::1]", kIp}, Refused{"::1", kIp}, Refused{"[::ffff:127.0.0.1]", kIp},
        Refused{"::ffff:127.0.0.1", kIp}, Refused{"fe80::1%eth0", kIp},
        Refused{"[fe80::1%25eth0]", kIp}, Refused{"[::1]:443", kIp},
        // Full-width digits and ideographic full stops map to an IPv4 literal (UTS #46).
        Refused{"\xef\xbc\x91\xef\xbc\x92\xef\xbc\x97.0.0.1", kIp},
        Refused{"127\xe3\x80\x82"
                "0\xe3\x80\x82"
                "0\xe3\x80\x82"
                "1",
                kIp}));

INSTANTIATE_TEST_SUITE_P(
    BadNames, NormaliseHostRefused,
    testing::Values(Refused{"", "is empty"}, Refused{"   ", "is empty"}, Refused{".", "is empty"},
                    Refused{"localhost", kSingle}, Refused{"LOCALHOST.", kSingle},
                    Refused{"com", kSingle}, Refused{"under_score.example.com", kBadChar},
                    Refused{"a/b.example.com", kBadChar}, Refused{"user@example.com", kBadChar},
                    Refused{"*.example.com", kBadChar},
                    // A port glued on, or JSON, is a bad name, not an address.
                    Refused{"example.com:443", kBadChar}, Refused{"evil\"},{\"a\":1}", kBadChar},
                    Refused{"[evil]", kBadChar}, Refused{"ex%ample.com", kBadChar},
                    Refused{"exa mple.com", "has a space or control character"},
                    Refused{std::string("example.com\0evil.test", 21),
                            "has a space or control character"},
                    Refused{"example.com\x7f", "has a space or control character"},
                    Refused{"a..example.com", "has an empty label"},
                    Refused{".example.com", "has an empty label"},
                    Refused{"example.com..", "has an empty label"},
                    Refused{"-a.example.com", "has a label that starts or ends with '-'"},
                    Refused{"a-.example.com", "has a label that starts or ends with '-'"},
                    Refused{std::string(64, 'a') + ".com", "has a label longer than 63 characters"},
                    Refused{std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                                std::string(63, 'c') + "." + std::string(58, 'd') + ".com",
                            "is longer than 253 characters"}));

TEST(NormaliseHost, LongestNameIs253Characters) {
  const std::string name = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                           std::string(63, 'c') + "." + std::string(57, 'd') + ".com";
  ASSERT_EQ(name.size(), 253u);
  EXPECT_EQ(normalise_host(name).value_or("?"), name);
  EXPECT_EQ(normalise_host(name + ".").value_or("?"), name);
}

TEST(NormaliseHost, InvalidUtf8IsNotAName) {
  const auto host = normalise_host(
      "ex\xff"
      "ample.com");
  ASSERT_FALSE(host.has_value());
  EXPECT_TRUE(host.error().starts_with("is not a valid internationalised name")) << host.error();
}

#if defined(__linux__)
// Whether libidn2 is in the process: dlopen(3) with RTLD_NOLOAD opens nothing, it only
// finds a library already loaded.
bool idn2_loaded() {
  void* handle = ::dlopen("libidn2.so.0", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  ::dlclose(handle);
  return true;
}

// libidn2 is opened the first time a non-ASCII name is converted, never for an ASCII one (so
// a command that names no international domain does not pay for loading it). Checked in a
// fresh process (the "threadsafe" death-test style re-executes this binary), since another
// test of this binary may have converted a name already.
TEST(NormaliseHost, OpensLibidn2OnlyForANonAsciiName) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (idn2_loaded()) std::_Exit(1);
        if (normalise_host("Example.COM.").value_or("?") != "example.com") std::_Exit(2);
        if (normalise_host("*.example.com").has_value()) std::_Exit(3);
        if (idn2_loaded()) std::_Exit(4);
        if (normalise_host("b\xc3\xbc"
                           "cher.example")
                .value_or("?") != "xn--bcher-kva.example")
          std::_Exit(5);
        std::_Exit(idn2_loaded() ? 0 : 6);
      },
      testing::ExitedWithCode(0), "");
}
#endif

// ---- parse_authority -------------------------------------------------------------------------

TEST(ParseAuthority, SplitsHostAndPort) {
  EXPECT_EQ(parse_authority("example.com:443").value(), (Authority{"example.com", 443}));
  EXPECT_EQ(parse_authority("Example.COM.:1").value(), (Authority{"Example.COM.", 1}));
  EXPECT_EQ(parse_authority("example.com:65535").value(), (Authority{"example.com", 65535}));
  EXPECT_EQ(parse_authority("example.com:0443").value(), (Authority{"example.com", 443}));
  EXPECT_EQ(parse_authority("[::1]:443").value(), (Authority{"[::1]", 443}));
  EXPECT_EQ(parse_authority("::1:443").value(), (Authority{"::1", 443}));
}

TEST(ParseAuthority, IpLiteralsParseButAreRefusedByTheNormaliser) {
  for (const char* target : {"[::1]:443", "[::ffff:127.0.0.1]:80", "127.0.0.1:22", "::1:443",
                             "2130706433:80", "0x7f.1:80"}) {
    const auto authority = parse_authority(target);
    ASSERT_TRUE(authority.has_value()) << target;
    const auto host = normalise_host(authority->host);
    ASSERT_FALSE(host.has_value()) << target;
    EXPECT_EQ(host.error(), kIp) << target;
  }
}

TEST(ParseAuthority, RefusesMalformedTargets) {
  const std::string bad_port = "has a port that is not a number between 1 and 65535";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"example.com", "has no port"},   {"[::1]", "has no port"},
      {"[::1]x:443", "has no port"},    {"[::1:443", "has an unterminated '['"},
      {":443", "has an empty host"},    {"example.com:", "has an empty port"},
      {"example.com:0", bad_port},      {"example.com:65536", bad_port},
      {"example.com:123456", bad_port}, {"example.com:+443", bad_port},
      {"example.com:44 3", bad_port},   {"u@example.com:443", "has user information"},
      {"example.com:https", bad_port},
  };
  for (const auto& [target, reason] : cases) {
    const auto authority = parse_authority(target);
    ASSERT_FALSE(authority.has_value()) << target;
    EXPECT_EQ(authority.error(), reason) << target;
  }
}

// ---- domain patterns on normalised hosts, with ports (docs/cases.md, C-05, C-07) -------------

bool pattern_matches(std::string_view pattern, std::string_view host, std::uint16_t port) {
  const auto parsed = policy::DomainPattern::parse(pattern, policy::ListKind::Allowed);
  EXPECT_TRUE(parsed.has_value()) << pattern;
  const auto normalised = normalise_host(host);
  EXPECT_TRUE(normalised.has_value()) << host;
  return parsed && normalised && parsed->matches(*normalised, port);
}

TEST(DestinationPatterns, ThePortIsPartOfTheDestination) {
  EXPECT_TRUE(pattern_matches("example.com:443", "example.com", 443));
  EXPECT_TRUE(pattern_matches("example.com:443", "EXAMPLE.com.", 443));
  EXPECT_FALSE(pattern_matches("example.com:443", "example.com", 80));
  EXPECT_FALSE(pattern_matches("example.com:443", "example.com", 9999));
  EXPECT_TRUE(pattern_matches("example.com", "example.com", 9999));
}

TEST(DestinationPatterns, WildcardsMatchStrictSubdomainsOnly) {
  EXPECT_TRUE(pattern_matches("*.example.com", "a.example.com", 443));
  EXPECT_TRUE(pattern_matches("*.example.com", "A.B.Example.Com.", 443));
  EXPECT_FALSE(pattern_matches("*.example.com", "example.com", 443));
  EXPECT_FALSE(pattern_matches("*.example.com", "notexample.com", 443));
  EXPECT_FALSE(pattern_matches("*.example.com", "example.com.evil.test", 443));
  EXPECT_FALSE(pattern_matches("example.com", "example.com.evil.test", 443));
  EXPECT_FALSE(pattern_matches("example.com", "notexample.com", 443));
  EXPECT_TRUE(pattern_matches("xn--bcher-kva.example",
                              "b\xc3\xbc"
                              "cher.example",
                              443));
}

// ---- prohibited_range ------------------------------------------------------------------------

struct Classified {
  std::string address;
  std::string range;  // empty: public
};

class ProhibitedRange : public testing::TestWithParam<Classified> {};

TEST_P(ProhibitedRange, NamesTheRange) {
  const auto& c = GetParam();
  const auto address = IpAddress::parse(c.address);
  ASSERT_TRUE(address.has_value()) << c.address;
  EXPECT_EQ(prohibited_range(*address).value_or(""), c.range) << c.address;
}

INSTANTIATE_TEST_SUITE_P(
    Ipv4Boundaries, ProhibitedRange,
    testing::Values(
        Classified{"0.0.0.0", "unspecified"}, Classified{"0.255.255.255", "unspecified"},
        Classified{"1.0.0.0", ""}, Classified{"9.255.255.255", ""},
        Classified{"10.0.0.0", "private"}, Classified{"10.255.255.255", "private"},
        Classified{"11.0.0.0", ""}, Classified{"100.63.255.255", ""},
        Classified{"100.64.0.0", "carrier-grade NAT"},
        Classified{"100.127.255.255", "carrier-grade NAT"}, Classified{"100.128.0.0", ""},
        Classified{"126.255.255.255", ""}, Classified{"127.0.0.0", "loopback"},
        Classified{"127.0.0.1", "loopback"}, Classified{"127.255.255.255", "loopback"},
        Classified{"128.0.0.0", ""}, Classified{"169.253.255.255", ""},
        Classified{"169.254.0.0", "link-local"}, Classified{"169.254.169.254", "link-local"},
        Classified{"169.254.255.255", "link-local"}, Classified{"169.255.0.0", ""},
        Classified{"172.15.255.255", ""}, Classified{"172.16.0.0", "private"},
        Classified{"172.31.255.255", "private"}, Classified{"172.32.0.0", ""},
        Classified{"191.255.255.255", ""}, Classified{"192.0.0.0", "IETF protocol assignments"},
        Classified{"192.0.0.255", "IETF protocol assignments"}, Classified{"192.0.1.0", ""},
        Classified{"192.0.2.1", ""}, Classified{"192.167.255.255", ""},
        Classified{"192.168.0.0", "private"}, Classified{"192.168.255.255", "private"},
        Classified{"192.169.0.0", ""}, Classified{"198.17.255.255", ""},
        Classified{"198.18.0.0", "benchmarking"}, Classified{"198.19.255.255", "benchmarking"},
        Classified{"198.20.0.0", ""}, Classified{"203.0.113.7", ""},
        Classified{"223.255.255.255", ""}, Classified{"224.0.0.0", "multicast"},
        Classified{"239.255.255.255", "multicast"}, Classified{"240.0.0.0", "reserved"},
        Classified{"255.255.255.254", "reserved"}, Classified{"255.255.255.255", "reserved"},
        Classified{"8.8.8.8", ""}, Classified{"1.1.1.1", ""}));

INSTANTIATE_TEST_SUITE_P(
    Ipv6Boundaries, ProhibitedRange,
    testing::Values(
        Classified{"::", "unspecified"}, Classified{"::1", "loopback"},
        Classified{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""}, Classified{"fc00::", "private"},
        Classified{"fd12:3456::1", "private"},
        Classified{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private"}, Classified{"fe00::", ""},
        Classified{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ""},
        Classified{"fe80::", "link-local"}, Classified{"fe80::1", "link-local"},
        Classified{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"},
        Classified{"fec0::", "site-local (deprecated)"},
        Classified{"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "site-local (deprecated)"},
        Classified{"2001::1", "Teredo (embeds an obscured IPv4)"},
        Classified{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo (embeds an obscured IPv4)"},
        Classified{"ff00::", "multicast"}, Classified{"ff02::1", "multicast"},
        Classified{"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"},
        Classified{"2001:4860:4860::8888", ""}, Classified{"2606:4700::1111", ""},
        Classified{"2001:db8::1", ""}));

INSTANTIATE_TEST_SUITE_P(
    EmbeddedIpv4, ProhibitedRange,
    testing::Values(
        Classified{"::ffff:127.0.0.1", "loopback (IPv4-mapped)"},
        Classified{"::ffff:7f00:1", "loopback (IPv4-mapped)"},
        Classified{"::ffff:169.254.169.254", "link-local (IPv4-mapped)"},
        Classified{"::ffff:0.0.0.0", "unspecified (IPv4-mapped)"},
        Classified{"::ffff:10.1.2.3", "private (IPv4-mapped)"}, Classified{"::ffff:8.8.8.8", ""},
        Classified{"::127.0.0.1", "loopback (IPv4-compatible)"},
        Classified{"::2", "unspecified (IPv4-compatible)"},
        Classified{"::192.168.1.1", "private (IPv4-compatible)"}, Classified{"::8.8.8.8", ""},
        Classified{"64:ff9b::7f00:1", "loopback (NAT64)"},
        Classified{"64:ff9b::a9fe:a9fe", "link-local (NAT64)"}, Classified{"64:ff9b::808:808", ""},
        Classified{"64:ff9b:1::7f00:1", "local-use NAT64"},
        Classified{"2002:7f00:1::", "loopback (6to4)"},
        Classified{"2002:a00:1::1", "private (6to4)"},
        Classified{"2002:a9fe:a9fe::1", "link-local (6to4)"}, Classified{"2002:808:808::1", ""},
        Classified{"2003:7f00:1::", ""},
        // Not embedded forms: ::ffff:0:0/96 needs bytes 10-11 = ffff, ::/96 needs them 0.
        Classified{"::fffe:7f00:1", ""},
        Classified{"::ffff:0:7f00:1", "loopback (IPv4-translated)"},
        Classified{"0:0:0:1:0:ffff:7f00:1", ""}));

TEST(IpAddress, ParsesOnlyStrictNumericText) {
  EXPECT_EQ(IpAddress::parse("127.0.0.1"), IpAddress::v4({127, 0, 0, 1}));
  EXPECT_FALSE(IpAddress::parse("127.1").has_value());
  EXPECT_FALSE(IpAddress::parse("[::1]").has_value());
  EXPECT_FALSE(IpAddress::parse(std::string_view("1.2.3.4\0x", 9)).has_value());
  EXPECT_EQ(IpAddress::parse("::1")->text(), "::1");
  EXPECT_EQ(IpAddress::v4({203, 0, 113, 9}).text(), "203.0.113.9");
}

TEST(InterfaceAddress, MatchesTheHostsOwnAddressesInEveryForm) {
  const std::vector<IpAddress> own = {*IpAddress::parse("192.0.2.10"),
                                      *IpAddress::parse("2001:db8::1")};
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("192.0.2.10"), own));
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("::ffff:192.0.2.10"), own));
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("::192.0.2.10"), own));
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("64:ff9b::c000:20a"), own));  // NAT64
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("2002:c000:20a::1"), own));   // 6to4
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("::ffff:0:c000:20a"), own));  // translated
  EXPECT_TRUE(is_interface_address(*IpAddress::parse("2001:db8::1"), own));
  EXPECT_FALSE(is_interface_address(*IpAddress::parse("192.0.2.11"), own));
  EXPECT_FALSE(is_interface_address(*IpAddress::parse("2001:db8::2"), own));
  EXPECT_FALSE(is_interface_address(*IpAddress::parse("192.0.2.10"), {}));
}

}  // namespace
}  // namespace pisandbox::proxy
