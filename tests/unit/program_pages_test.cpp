// sandbox/linux/program_pages.hpp on this test's own process: the program's read-only pages
// leave its resident set, its writable data stays as it was, and the code keeps running.
#include "sandbox/linux/program_pages.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace {

using namespace pisandbox::sandbox::linux_;

/// Read-only data of the program (.rodata, 6 MiB stored in the file), read before the release.
constexpr std::size_t kTableBytes = 6 << 20;
extern const char kTable[kTableBytes];
const char kTable[kTableBytes] = {1};

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

/// The table's whole pages from `from` to `to` bytes into it.
std::pair<const void*, std::size_t> table_pages(std::size_t from, std::size_t to) {
  const auto begin = (reinterpret_cast<std::uintptr_t>(kTable) + from + kPage - 1) / kPage * kPage;
  const auto end = (reinterpret_cast<std::uintptr_t>(kTable) + to) / kPage * kPage;
  return {reinterpret_cast<const void*>(begin), end - begin};
}

long read_table() {
  long sum = 0;
  for (std::size_t at = 0; at < sizeof kTable; at += kPage)
    sum += *static_cast<const volatile char*>(&kTable[at]);
  return sum;
}

TEST(ProgramPages, TheProgramsReadOnlyPagesLeaveAndItsWrittenDataStays) {
  for (int i = 0; i < 4096; ++i) written[i] = i * 7;
  ASSERT_EQ(read_table(), 1);
  // The middle 2 MiB: a fault on data next to the table maps the cached pages around it, up to
  // a whole large folio (at most 2 MiB, aligned), so only pages 2 MiB from either end are
  // sure to stay unmapped.
  const auto [middle, bytes] = table_pages(2 << 20, 4 << 20);
  ASSERT_EQ(present_pages(middle, bytes), static_cast<long>(bytes / kPage));

  const auto advised = release_program_pages();
  ASSERT_TRUE(advised.has_value()) << advised.error().describe();
  EXPECT_GE(*advised, sizeof kTable - 2 * kPage);
  EXPECT_EQ(present_pages(middle, bytes), 0) << "of " << bytes / kPage << " pages";
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(written[i], i * 7) << "at " << i;
  // Read again, the table is as it was: its pages come back from the page cache.
  EXPECT_EQ(read_table(), 1);
}

// A page of a read-only segment written through /proc/self/mem (as a debugger sets a
// breakpoint) is a private copy, no longer the file's: the release keeps it.
TEST(ProgramPages, APageThatIsNoLongerTheFilesIsKept) {
  const auto [page, bytes] = table_pages(3 << 20, (3 << 20) + 2 * kPage);
  ASSERT_GE(bytes, kPage);
  const int mem = ::open("/proc/self/mem", O_RDWR | O_CLOEXEC);
  ASSERT_GE(mem, 0) << "open(/proc/self/mem): " << std::strerror(errno);
  const char mark = 'x';
  const auto at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(page));
  const ssize_t wrote = ::pwrite(mem, &mark, 1, at);
  ::close(mem);
  ASSERT_EQ(wrote, 1) << "pwrite(/proc/self/mem): " << std::strerror(errno);
  ASSERT_EQ(*static_cast<const volatile char*>(page), 'x');
  const auto advised = release_program_pages();
  ASSERT_TRUE(advised.has_value()) << advised.error().describe();
  EXPECT_EQ(*static_cast<const volatile char*>(page), 'x');
}

TEST(ProgramPages, AGivenPagemapDescriptorIsUsed) {
  const int pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(pagemap, 0);
  const auto advised = release_program_pages(pagemap);
  ::close(pagemap);
  ASSERT_TRUE(advised.has_value()) << advised.error().describe();
  EXPECT_GE(*advised, sizeof kTable - 2 * kPage);
  // A descriptor that is not a pagemap fails, and nothing is released.
  const auto refused = release_program_pages(999);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message.rfind("pread(/proc/self/pagemap): EBADF", 0), 0U)
      << refused.error().message;
}

TEST(ProgramPages, ASecondReleaseAdvisesTheSameRanges) {
  const auto first = release_program_pages();
  const auto second = release_program_pages();
  ASSERT_TRUE(first.has_value()) << first.error().describe();
  ASSERT_TRUE(second.has_value()) << second.error().describe();
  EXPECT_EQ(*first, *second);
  EXPECT_GE(*first, sizeof kTable - 2 * kPage);
}

}  // namespace
