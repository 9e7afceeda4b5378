// The parsers of /proc/net/snmp and /proc/net/snmp6 (sandbox/linux/net_counters.hpp), on texts
// as a 6.1 kernel writes them.
#include "sandbox/linux/net_counters.hpp"

#include <gtest/gtest.h>

namespace {

using namespace pisandbox::sandbox::linux_;

constexpr std::string_view kSnmp =
    "Ip: Forwarding DefaultTTL InReceives InHdrErrors InAddrErrors ForwDatagrams InUnknownProtos "
    "InDiscards InDelivers OutRequests OutDiscards OutNoRoutes ReasmTimeout ReasmReqds ReasmOKs "
    "ReasmFails FragOKs FragFails FragCreates OutTransmits\n"
    "Ip: 2 64 2 0 0 0 0 0 2 2 0 3 0 0 0 0 0 0 0 2\n"
    "Icmp: InMsgs InErrors\n"
    "Icmp: 0 0\n"
    "Tcp: RtoAlgorithm RtoMin ActiveOpens\n"
    "Tcp: 1 200 7\n"
    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
    "IgnoredMulti MemErrors\n"
    "Udp: 0 1 0 1 0 0 0 0 0\n"
    "UdpLite: InDatagrams NoPorts\n"
    "UdpLite: 0 9\n";

constexpr std::string_view kSnmp6 =
    "Ip6InReceives                   \t0\n"
    "Ip6InNoRoutes                   \t5\n"
    "Ip6OutNoRoutes                  \t4\n"
    "Udp6NoPorts                     \t2\n";

TEST(NetCounters, SnmpFields) {
  EXPECT_EQ(snmp_counter(kSnmp, "Ip", "OutNoRoutes"), 3u);
  EXPECT_EQ(snmp_counter(kSnmp, "Ip", "Forwarding"), 2u);
  EXPECT_EQ(snmp_counter(kSnmp, "Tcp", "ActiveOpens"), 7u);
  EXPECT_EQ(snmp_counter(kSnmp, "Udp", "NoPorts"), 1u);
  EXPECT_EQ(snmp_counter(kSnmp, "UdpLite", "NoPorts"), 9u);
  EXPECT_EQ(snmp_counter(kSnmp, "Ip", "Missing"), std::nullopt);
  EXPECT_EQ(snmp_counter(kSnmp, "Nope", "NoPorts"), std::nullopt);
  EXPECT_EQ(snmp_counter("Ip: OutNoRoutes\nIp: x\n", "Ip", "OutNoRoutes"), std::nullopt);
  EXPECT_EQ(snmp_counter("Ip: OutNoRoutes\n", "Ip", "OutNoRoutes"), std::nullopt);
  EXPECT_EQ(snmp_counter("Ip: A OutNoRoutes\nIp: 1\n", "Ip", "OutNoRoutes"), std::nullopt);
  EXPECT_EQ(snmp_counter("", "Ip", "OutNoRoutes"), std::nullopt);
}

TEST(NetCounters, Snmp6Fields) {
  EXPECT_EQ(snmp6_counter(kSnmp6, "Ip6OutNoRoutes"), 4u);
  EXPECT_EQ(snmp6_counter(kSnmp6, "Udp6NoPorts"), 2u);
  EXPECT_EQ(snmp6_counter(kSnmp6, "Ip6Out"), std::nullopt);
  EXPECT_EQ(snmp6_counter("Ip6OutNoRoutes -1\n", "Ip6OutNoRoutes"), std::nullopt);
}

TEST(NetCounters, DirectAttemptsSumBothFamilies) {
  EXPECT_EQ(direct_attempts(kSnmp, kSnmp6), (DirectAttempts{7, 3}));
  EXPECT_EQ(direct_attempts(kSnmp, ""), (DirectAttempts{3, 1}));
  EXPECT_FALSE(direct_attempts("", "").any());
  EXPECT_TRUE((DirectAttempts{0, 1}).any());
}

}  // namespace
