// src/core: the Error of a failed system call names the call and errno; UniqueFd closes what
// it owns exactly once; write_all writes everything through a full non-blocking pipe and
// reports a reader that is gone; printable() shows untrusted text whole (CVE-2021-42574 for
// the bidirectional controls); random_bytes() fills buffers of any size with bytes that differ
// from call to call.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/base64.hpp"
#include "core/error.hpp"
#include "core/io.hpp"
#include "core/printable.hpp"
#include "core/random.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::core {
namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) != -1;
}

struct Pipe {
  UniqueFd read, write;
  Pipe() {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    read.reset(fds[0]);
    write.reset(fds[1]);
  }
};

TEST(CoreError, ASystemCallNamesTheCallAndErrno) {
  const Error e = sys_error(R"(open("/nope", O_RDONLY))", ENOENT, "hint: create it");
  EXPECT_EQ(e.message, R"(open("/nope", O_RDONLY): ENOENT (No such file or directory))");
  EXPECT_EQ(e.code, ENOENT);
  EXPECT_EQ(e.describe(), e.message + "\nhint: create it");
  EXPECT_EQ(errno_name(0x7fff), "32767");

  errno = EACCES;
  const Result<int> failed = fail_errno("mkdir(/x)");
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().describe(), "mkdir(/x): EACCES (Permission denied)");
  const Result<int> plain = fail("no workspace");
  EXPECT_EQ(plain.error().code, 0);
  EXPECT_EQ(plain.error().describe(), "no workspace");
}

TEST(CoreUniqueFd, ClosesWhatItOwnsOnceAndNothingItReleased) {
  Pipe p;
  const int r = p.read.get();
  {
    UniqueFd moved(std::move(p.read));
    EXPECT_FALSE(p.read.valid());
    EXPECT_EQ(moved.get(), r);
    EXPECT_TRUE(is_open(r));
  }
  EXPECT_FALSE(is_open(r));

  const int w = p.write.release();
  EXPECT_FALSE(p.write);
  EXPECT_TRUE(is_open(w));
  UniqueFd owner(w);
  owner = UniqueFd();
  EXPECT_FALSE(is_open(w));
  EXPECT_EQ(owner.get(), -1);
}

TEST(CoreWriteAll, WritesEverythingThroughAFullNonBlockingPipe) {
  Pipe p;
  ASSERT_EQ(::fcntl(p.write.get(), F_SETFL, O_NONBLOCK), 0);
  const int capacity = ::fcntl(p.write.get(), F_GETPIPE_SZ);
  ASSERT_GT(capacity, 0);
  // Four times what the pipe holds: write(2) returns short, then EAGAIN until the reader
  // drains it.
  std::string bytes(static_cast<std::size_t>(capacity) * 4, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 26);
  std::string received;
  std::thread reader([&] {
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(p.read.get(), buffer, sizeof buffer)) > 0)
      received.append(buffer, static_cast<std::size_t>(n));
  });
  EXPECT_TRUE(write_all(p.write.get(), bytes));
  p.write.reset();
  reader.join();
  EXPECT_EQ(received, bytes);
}

TEST(CoreWriteAll, AReaderThatIsGoneIsAFailure) {
  Pipe p;
  p.read.reset();
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old), 0);
  errno = 0;
  EXPECT_FALSE(write_all(p.write.get(), "x"));
  EXPECT_EQ(errno, EPIPE);
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_FALSE(write_all(-1, "x"));
  EXPECT_EQ(errno, EBADF);
  EXPECT_TRUE(write_all(-1, ""));  // nothing to write: no call
}

/// A scratch directory removed with its contents at the end of the test.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    char name[] = "/tmp/pi-sandbox-core-test-XXXXXX";
    path = ::mkdtemp(name) != nullptr ? name : "";
  }
  ~ScratchDir() {
    if (!path.empty()) (void)std::system(("rm -rf '" + path + "'").c_str());
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

TEST(CoreReadRegularHead, ReadsUpToTheLimitAndAllocatesForWhatItRead) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path.empty());
  const std::string small = dir.path + "/small", big = dir.path + "/big";
  {
    const UniqueFd fd(::open(small.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(write_all(fd.get(), "[user]\n\tname = a\n"));
    const UniqueFd big_fd(::open(big.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(write_all(big_fd.get(), std::string(100000, 'x')));
  }
  const std::string text = read_regular_head(small.c_str(), std::size_t{1} << 20);
  EXPECT_EQ(text, "[user]\n\tname = a\n");
  // A limit of 1 MiB zeroed up front cost a page fault per 4 KiB on every command.
  EXPECT_LT(text.capacity(), std::size_t{64} << 10);
  EXPECT_EQ(read_regular_head(big.c_str(), 70000), std::string(70000, 'x'));
  EXPECT_EQ(read_regular_head(big.c_str(), 1 << 20).size(), 100000U);
}

TEST(CoreReadRegularHead, AFifoADirectoryAndAMissingPathAreEmptyWithoutBlocking) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path.empty());
  const std::string fifo = dir.path + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(read_regular_head(fifo.c_str(), 1 << 20), "");  // no writer: would block
  EXPECT_EQ(read_regular_head(dir.path.c_str(), 1 << 20), "");
  EXPECT_EQ(read_regular_head((dir.path + "/missing").c_str(), 1 << 20), "");
}

TEST(CoreRandom, FillsEveryByteAndTwoCallsDiffer) {
  std::array<unsigned char, 16> first{}, second{};
  ASSERT_TRUE(random_bytes(first));
  ASSERT_TRUE(random_bytes(second));
  EXPECT_NE(first, second);  // equal with probability 2^-128
  // More than one getentropy(3) call (256 bytes at most each): the last bytes are filled too.
  std::vector<unsigned char> large(600, 0);
  ASSERT_TRUE(random_bytes(large));
  EXPECT_FALSE(std::all_of(large.end() - 64, large.end(), [](unsigned char b) { return b == 0; }));
  EXPECT_FALSE(
      std::all_of(large.begin(), large.begin() + 64, [](unsigned char b) { return b == 0; }));
}

TEST(CorePrintable, ShowsControlsAndBidirectionalMarksEscaped) {
  EXPECT_EQ(printable("ls -l"), "ls -l");
  EXPECT_EQ(printable(std::string("a\nb\0c\x7f", 6)), "a\\nb\\x00c\\x7f");
  EXPECT_EQ(printable("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(printable("\xc2\x9b"
                      "c"),
            "\\u009bc");  // C1 CSI
  EXPECT_EQ(printable("\xe2\x80\xae"
                      "gnp.exe"),
            "\\u202egnp.exe");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(printable("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(printable("\xd8\x9c"), "\\u061c");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x80\x94 \xff"), "caf\xc3\xa9 \xe2\x80\x94 \xff");  // kept
}

}  // namespace
}  // namespace pisandbox::core

// RFC 4648, section 10: the test vectors, both ways.
TEST(CoreBase64, EncodesAndDecodesTheRfcTestVectors) {
  const std::array<std::pair<std::string_view, std::string_view>, 7> vectors = {{
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  }};
  for (const auto& [bytes, text] : vectors) {
    EXPECT_EQ(pisandbox::core::base64_encode(bytes), text);
    EXPECT_EQ(pisandbox::core::base64_decode(text), std::string(bytes));
  }
  const std::string all = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
    return s;
  }();
  EXPECT_EQ(pisandbox::core::base64_decode(pisandbox::core::base64_encode(all)), all);
}

TEST(CoreBase64, RefusesWhatIsNotPaddedBase64) {
  for (std::string_view text :
       {"Zg=", "Zg", "====", "Z===", "Zg=a", "Z=g=", "Zm9v\n", "Zm 9", "Zm9-", "Zm9_", "Zg==Zg=="})
    EXPECT_EQ(pisandbox::core::base64_decode(text), std::nullopt) << text;
}
