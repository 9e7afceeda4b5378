// The phase trace (docs/benchmarks.md, "Phase trace"): marks sent by another process are
// received as they were taken, and the report names each phase with its milliseconds.
#include "core/phase_trace.hpp"

#include <gtest/gtest.h>

namespace pisandbox::core::phases {
namespace {

TEST(PhaseTrace, OffItRecordsAndReportsNothing) {
  trace() = Trace{};
  mark(Mark::ConfigRead);
  EXPECT_EQ(trace().count, 0u);
  EXPECT_EQ(take_unsent(), "");
  EXPECT_EQ(report(), "");
}

TEST(PhaseTrace, MarksOfAnotherProcessArriveAsTaken) {
  trace() = Trace{};
  trace().enabled = true;
  record(Mark::Start, 1'000'000);
  record(Mark::Cloned, 3'500'000);
  forget_inherited();  // as pid 1 does: the supervisor's marks are not sent back
  record(Mark::GoReceived, 4'000'000);
  record(Mark::CgroupJoined, 4'100'000);
  record(Mark::MountsApplied, 6'250'000);
  const std::string sent = take_unsent();
  EXPECT_EQ(sent.size(), 3u * 9);
  EXPECT_EQ(take_unsent(), "");
  trace() = Trace{};
  trace().enabled = true;
  record(Mark::Start, 1'000'000);
  record(Mark::IdMapsWritten, 3'750'000);
  receive(sent);
  record(Mark::Cloned, 3'500'000);
  record(Mark::Forked, 7'500'000);
  EXPECT_EQ(report(),
            "pi-sandbox: phase clone 2.500\n"
            "pi-sandbox: phase id-maps 0.250\n"
            "pi-sandbox: phase go 0.250\n"
            "pi-sandbox: phase cgroup 0.100\n"
            "pi-sandbox: phase mounts 2.150\n"
            "pi-sandbox: phase fork 1.250\n"
            "pi-sandbox: phase total 6.500\n");
}

// serve's worker measures from its command's request: what it and pid 1 marked while the
// sandbox was made ahead is not the command's.
TEST(PhaseTrace, ARestartMeasuresFromItsStartAndDropsEarlierMarks) {
  trace() = Trace{};
  EXPECT_EQ(clock_line("worker-start", 5), "");
  trace().enabled = true;
  record(Mark::Start, 1'000'000);
  record(Mark::Planned, 2'000'000);
  restart();
  const std::int64_t start = trace().start_ns;
  EXPECT_EQ(trace().count, 1u);
  record(Mark::MountsApplied, start - 1'000'000);  // pid 1's, from before the request
  record(Mark::Checked, start + 500'000);
  record(Mark::ExitSent, start + 2'000'000);
  EXPECT_EQ(report(),
            "pi-sandbox: phase check 0.500\n"
            "pi-sandbox: phase exit-sent 1.500\n"
            "pi-sandbox: phase total 2.000\n");
  EXPECT_EQ(clock_line("worker-start", 5), "pi-sandbox: phase-clock worker-start 5\n");
}

TEST(PhaseTrace, AMalformedRecordIsIgnored) {
  trace() = Trace{};
  trace().enabled = true;
  receive("abc");
  receive(std::string(9, '\x7f'));  // an unknown mark
  EXPECT_EQ(trace().count, 0u);
}

}  // namespace
}  // namespace pisandbox::core::phases
