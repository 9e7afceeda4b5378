// sandbox/linux/program_pages.hpp on this test's own process: the program's read-only pages
// leave its resident set, its writable data stays as it was, and the code keeps running.
#include "sandbox/linux/program_pages.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>

namespace {

using namespace pisandbox::sandbox::linux_;

/// Read-only data of the program (.rodata, 1 MiB stored in the file), read before the release.
extern const char kTable[1 << 20];
const char kTable[1 << 20] = {1};

/// Written data in the program's writable segment, which must survive the release.
int written[4096] = {1};

constexpr std::size_t kPage = 4096;

/// How many of the pages of [begin, begin + bytes) this process has mapped: bit 63 ("page
/// present") of each one's /proc/self/pagemap entry (Documentation/admin-guide/mm/pagemap.rst),
/// or -1 when pagemap cannot be read.
long present_pages(const void* begin, std::size_t bytes) {
  const auto first = reinterpret_cast<std::uintptr_t>(begin) / kPage;
  const std::size_t count = bytes / kPage;
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  long present = 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t entry = 0;
    if (::pread(fd, &entry, sizeof entry, static_cast<off_t>((first + i) * sizeof entry)) !=
        static_cast<ssize_t>(sizeof entry)) {
      present = -1;
      break;
    }
    present += static_cast<long>(entry >> 63);
  }
  ::close(fd);
  return present;
}

TEST(ProgramPages, TheProgramsReadOnlyPagesLeaveAndItsWrittenDataStays) {
  for (int i = 0; i < 4096; ++i) written[i] = i * 7;
  long sum = 0;
  for (std::size_t at = 0; at < sizeof kTable; at += kPage)
    sum += *static_cast<const volatile char*>(&kTable[at]);
  ASSERT_EQ(sum, 1);
  // The table's whole pages: the first and the last may share a page with other data.
  const auto begin = (reinterpret_cast<std::uintptr_t>(kTable) + kPage - 1) / kPage * kPage;
  const void* inside = reinterpret_cast<const void*>(begin);
  const std::size_t bytes = (sizeof kTable - kPage) / kPage * kPage;
  ASSERT_EQ(present_pages(inside, bytes), static_cast<long>(bytes / kPage));

  const auto advised = release_program_pages();
  ASSERT_TRUE(advised.has_value()) << advised.error().describe();
  EXPECT_GE(*advised, sizeof kTable);
  // Nothing read the table since; a fault on data next to it maps up to 16 pages around it
  // (the page cache's fault-around, 64 KiB by default) at each end.
  EXPECT_LE(present_pages(inside, bytes), 32) << "of " << bytes / kPage << " pages";
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(written[i], i * 7) << "at " << i;
  // Read again, the table is as it was: its pages come back from the page cache.
  sum = 0;
  for (std::size_t at = 0; at < sizeof kTable; ++at)
    sum += *static_cast<const volatile char*>(&kTable[at]);
  EXPECT_EQ(sum, 1);
}

TEST(ProgramPages, ASecondReleaseAdvisesTheSameRanges) {
  const auto first = release_program_pages();
  const auto second = release_program_pages();
  ASSERT_TRUE(first.has_value()) << first.error().describe();
  ASSERT_TRUE(second.has_value()) << second.error().describe();
  EXPECT_EQ(*first, *second);
  EXPECT_GE(*first, sizeof kTable);
}

}  // namespace
