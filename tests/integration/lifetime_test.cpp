// Process lifetime: background children, timeout, cancellation, and the supervisor killed
// at random early moments (docs/cases.md, C-10, C-11; docs/security.md, "Nothing left behind").
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <thread>

#include "harness.hpp"

namespace pisandbox::testing {
namespace {

using namespace std::chrono_literals;

/// A sleep whose argument is unique to this test process, so that concurrent runs of the
/// suite (root and unprivileged) never see each other's processes.
std::string unique_sleep(int salt) {
  return "sleep " + std::to_string(6000 + (::getpid() % 1000) * 10 + salt);
}

TEST(Lifetime, BackgroundChildrenDieWithTheCommand) {  // docs/cases.md, C-10
  Scratch s;
  const std::string sleeper = unique_sleep(1);
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = s.run(sleeper + " & echo started");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_LT(took, 30s);  // returned, not held open by the child (a bound, not a timing test)
  EXPECT_TRUE(wait_until_gone(sleeper));
}

TEST(Lifetime, TimeoutKillsTheWholeTree) {
  Scratch s;
  const std::string a = unique_sleep(2), b = unique_sleep(3);
  const RunResult r = s.run(a + " & " + b, {"--timeout", "1"});
  EXPECT_EQ(r.exit_code, 124);
  EXPECT_EQ(r.err, "pi-sandbox: command timed out after 1 seconds\n");
  EXPECT_TRUE(wait_until_gone(a));
  EXPECT_TRUE(wait_until_gone(b));
  EXPECT_EQ(list_dir(s.ws), std::vector<std::string>{});
}

void expect_cancelled_by(int sig, int code) {
  Scratch s;
  const std::string sleeper = unique_sleep(4 + sig % 3);
  const pid_t pid = spawn_process(
      {sandbox_binary(), "run", "--cwd", s.ws.string(), "-c", sleeper + " & " + sleeper}, s.env());
  for (int i = 0; i < 250 && !process_running(sleeper); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(process_running(sleeper));
  ::kill(pid, sig);
  EXPECT_EQ(wait_process(pid), code);
  EXPECT_TRUE(wait_until_gone(sleeper));
  EXPECT_EQ(list_dir(s.ws), std::vector<std::string>{});
}

TEST(Lifetime, SigtermCancelsTheWholeTreeWith143) {
  expect_cancelled_by(SIGTERM, 143);
}
TEST(Lifetime, SigintCancelsTheWholeTreeWith130) {
  expect_cancelled_by(SIGINT, 130);
}

TEST(Lifetime, KillingTheSupervisorAtRandomEarlyMomentsLeavesNothing) {  // docs/cases.md, C-11
  Scratch s;
  const std::string sleeper = "sleep 1234";
  std::mt19937 random(static_cast<unsigned>(::getpid()));
  std::uniform_int_distribution<int> delay_us(0, 50000);
  for (int i = 0; i < 100; ++i) {
    const pid_t pid = spawn_process(
        {sandbox_binary(), "run", "--cwd", s.ws.string(), "--", "sleep", "1234"}, s.env());
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(random)));
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_process(pid), 128 + SIGKILL);
  }
  EXPECT_TRUE(wait_until_gone(sleeper, 30s));
  // Placeholders are removed by pid 1 on the parent-death signal.
  for (int i = 0; i < 1500 && !list_dir(s.ws).empty(); ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(list_dir(s.ws), std::vector<std::string>{});
}

}  // namespace
}  // namespace pisandbox::testing
