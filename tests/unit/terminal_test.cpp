// plan_terminal(): the pure decision whether a command gets a private pty and which of its
// standard descriptors become the slave; TerminalLease: the hand-over of the caller's terminal
// between the pty relay and a question (docs/security.md, "The terminal").
#include "sandbox/linux/terminal.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/terminal_lease.hpp"

namespace pisandbox::sandbox::linux_ {
namespace {

using namespace std::chrono_literals;

TerminalFacts facts(bool in, bool out, bool err, bool foreground) {
  return TerminalFacts{in, out, err, foreground};
}

TEST(TerminalPlan, AllThreeATerminalInTheForegroundGetAPtyWithInput) {
  EXPECT_EQ(plan_terminal(facts(true, true, true, true)),
            (TerminalPlan{true, true, {true, true, true}}));
}

TEST(TerminalPlan, StderrRedirectedStaysTheCallers) {
  EXPECT_EQ(plan_terminal(facts(true, true, false, true)),
            (TerminalPlan{true, true, {true, true, false}}));
}

TEST(TerminalPlan, StdinFromAPipeGetsAnOutputOnlyPty) {
  // `echo x | pi-sandbox run -- cmd`: no raw mode, no input relayed; foreground is moot.
  EXPECT_EQ(plan_terminal(facts(false, true, true, false)),
            (TerminalPlan{true, false, {false, true, true}}));
}

TEST(TerminalPlan, StdoutIntoAPipeKeepsTodaysDescriptors) {
  // `pi-sandbox run -c 'git log' | less`: the terminal belongs to less.
  EXPECT_EQ(plan_terminal(facts(true, false, true, true)), TerminalPlan{});
  EXPECT_EQ(plan_terminal(facts(false, false, false, false)), TerminalPlan{});
}

TEST(TerminalPlan, ABackgroundJobKeepsTodaysDescriptors) {
  // Raw mode from a background job would stop pi-sandbox with SIGTTOU.
  EXPECT_EQ(plan_terminal(facts(true, true, true, false)), TerminalPlan{});
}

TEST(TerminalFactsFromOptions, CapturedOutputAndReplacedStdinAreNoTerminals) {
  // serve: stdout and stderr are pipes to a sink, stdin a descriptor of its own.
  struct NullSink final : OutputSink {
    void write(Stream, std::string_view) override {}
  } sink;
  RunOptions options;
  options.output = &sink;
  options.stdin_fd = 0;
  EXPECT_EQ(terminal_facts(options), TerminalFacts{});
  EXPECT_FALSE(plan_terminal(terminal_facts(options)).private_pty);
}

TEST(TerminalLease, WithoutAHolderABorrowerGoesOnAtOnce) {
  auto& lease = core::TerminalLease::controlling();
  const core::TerminalLease::Borrowed borrowed(lease);
  SUCCEED();
}

TEST(TerminalLease, ABorrowerWaitsUntilTheHolderHasLetGoAndTheHolderIsToldOfBoth) {
  auto& lease = core::TerminalLease::controlling();
  const int wake = lease.hold();
  ASSERT_GE(wake, 0);
  std::atomic<int> stage{0};
  std::thread question([&] {
    const core::TerminalLease::Borrowed borrowed(lease);
    stage = 1;  // has the terminal
    std::this_thread::sleep_for(50ms);
  });
  pollfd pfd{wake, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  EXPECT_TRUE(lease.wanted());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(stage.load(), 0);  // still waiting: the holder has not let go
  lease.lent(true);
  question.join();
  EXPECT_EQ(stage.load(), 1);
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);  // given back
  EXPECT_FALSE(lease.wanted());
  lease.lent(false);
  lease.release();
}

TEST(TerminalLease, ReleasingLetsAWaitingBorrowerGoOn) {
  auto& lease = core::TerminalLease::controlling();
  const int wake = lease.hold();
  std::atomic<bool> done{false};
  std::thread question([&] {
    const core::TerminalLease::Borrowed borrowed(lease);
    done = true;
  });
  pollfd pfd{wake, POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 5000), 1);
  EXPECT_TRUE(lease.wanted());
  lease.release();  // the relay ended without lending
  question.join();
  EXPECT_TRUE(done.load());
  (void)lease.wanted();  // clear the give-back's wake-up for the next test
}

}  // namespace
}  // namespace pisandbox::sandbox::linux_
