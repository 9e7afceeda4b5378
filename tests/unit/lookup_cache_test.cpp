// proxy/lookup_cache.hpp: what is kept, for how long, and how much.
#include "proxy/lookup_cache.hpp"

#include <gtest/gtest.h>

namespace pisandbox::proxy {
namespace {

using namespace std::chrono_literals;
using Clock = LookupCache::Clock;

std::vector<asio::ip::tcp::endpoint> at(const char* address, std::uint16_t port) {
  return {asio::ip::tcp::endpoint(asio::ip::make_address(address), port)};
}

TEST(LookupCache, AnEntryServesUntilItsLifetimeEnds) {
  LookupCache cache(8, 5000ms);
  const Clock::time_point t0{};
  cache.put("a.example", 443, at("203.0.113.7", 443), t0);
  ASSERT_NE(cache.find("a.example", 443, t0 + 4999ms), nullptr);
  EXPECT_EQ(*cache.find("a.example", 443, t0 + 4999ms), at("203.0.113.7", 443));
  EXPECT_EQ(cache.find("a.example", 443, t0 + 5000ms), nullptr);
  EXPECT_EQ(cache.size(), 0U);  // the expired entry went
}

TEST(LookupCache, TheKeyIsTheNameAndThePort) {
  LookupCache cache(8, 5000ms);
  const Clock::time_point t0{};
  cache.put("a.example", 443, at("203.0.113.7", 443), t0);
  EXPECT_EQ(cache.find("a.example", 80, t0), nullptr);
  EXPECT_EQ(cache.find("b.example", 443, t0), nullptr);
  EXPECT_NE(cache.find("a.example", 443, t0), nullptr);
}

TEST(LookupCache, ANewLookupReplacesTheOldAndForgetDropsIt) {
  LookupCache cache(8, 5000ms);
  const Clock::time_point t0{};
  cache.put("a.example", 443, at("203.0.113.7", 443), t0);
  cache.put("a.example", 443, at("203.0.113.8", 443), t0 + 4000ms);
  EXPECT_EQ(cache.size(), 1U);
  ASSERT_NE(cache.find("a.example", 443, t0 + 8000ms), nullptr);  // lives from its own lookup
  EXPECT_EQ(*cache.find("a.example", 443, t0 + 8000ms), at("203.0.113.8", 443));
  cache.forget("a.example", 443);
  EXPECT_EQ(cache.find("a.example", 443, t0 + 8000ms), nullptr);
}

TEST(LookupCache, TheOldestGoesPastTheBound) {
  LookupCache cache(2, 5000ms);
  const Clock::time_point t0{};
  cache.put("a.example", 443, at("203.0.113.1", 443), t0);
  cache.put("b.example", 443, at("203.0.113.2", 443), t0);
  cache.put("c.example", 443, at("203.0.113.3", 443), t0);
  EXPECT_EQ(cache.size(), 2U);
  EXPECT_EQ(cache.find("a.example", 443, t0), nullptr);
  EXPECT_NE(cache.find("b.example", 443, t0), nullptr);
  EXPECT_NE(cache.find("c.example", 443, t0), nullptr);
}

TEST(LookupCache, NothingIsKeptWithoutRoomLifetimeOrAddresses) {
  const Clock::time_point t0{};
  LookupCache no_room(0, 5000ms), no_time(8, 0ms), kept(8, 5000ms);
  no_room.put("a.example", 443, at("203.0.113.7", 443), t0);
  no_time.put("a.example", 443, at("203.0.113.7", 443), t0);
  kept.put("a.example", 443, {}, t0);
  EXPECT_EQ(no_room.size() + no_time.size() + kept.size(), 0U);
}

TEST(LookupCache, AClockThatWentBackDropsTheEntry) {
  LookupCache cache(8, 5000ms);
  const Clock::time_point t0 = Clock::time_point{} + 10s;
  cache.put("a.example", 443, at("203.0.113.7", 443), t0);
  EXPECT_EQ(cache.find("a.example", 443, t0 - 1ms), nullptr);
}

}  // namespace
}  // namespace pisandbox::proxy
