// sandbox::OutputPipes, on real pipes: each stream reaches the sink whole and in order, one
// pipe for both streams keeps the order of the writes (serve's `stderr: "stdout"`,
// docs/protocol.md), and drain() ends even while a writer that outlived the command is alive.
#include "sandbox/output_pipes.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pisandbox::sandbox {
namespace {

/// The sink's calls, in order.
struct Recorder final : OutputSink {
  std::vector<std::pair<Stream, std::string>> calls;
  void write(Stream stream, std::string_view bytes) override {
    calls.emplace_back(stream, std::string(bytes));
  }
  [[nodiscard]] std::string of(Stream stream) const {
    std::string all;
    for (const auto& [s, bytes] : calls)
      if (s == stream) all += bytes;
    return all;
  }
};

void put(const core::UniqueFd& fd, std::string_view bytes) {
  ASSERT_EQ(::write(fd.get(), bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

TEST(OutputPipes, TwoPipesKeepTheStreamsApartUntilEndOfFile) {
  auto created = OutputPipes::create();
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  OutputPipes pipes = std::move(*created);
  for (const int fd : {pipes.out.get(), pipes.err.get()}) {
    EXPECT_NE(::fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    EXPECT_NE(::fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  }
  EXPECT_NE(::fcntl(pipes.write_out.get(), F_GETFD) & FD_CLOEXEC, 0);

  Recorder sink;
  pipes.pump(sink);  // nothing written yet: nothing read, nothing closed
  EXPECT_TRUE(sink.calls.empty());
  EXPECT_TRUE(pipes.open());

  put(pipes.write_out, "out 1\n");
  put(pipes.write_err, "err 1\n");
  put(pipes.write_out, "out 2\n");
  pipes.pump(sink);
  EXPECT_EQ(sink.of(Stream::Stdout), "out 1\nout 2\n");
  EXPECT_EQ(sink.of(Stream::Stderr), "err 1\n");
  EXPECT_TRUE(pipes.out.valid() && pipes.err.valid());

  pipes.write_out.reset();
  pipes.pump(sink);
  EXPECT_FALSE(pipes.out.valid());  // end of file
  EXPECT_TRUE(pipes.err.valid());
  pipes.write_err.reset();
  pipes.pump(sink);
  EXPECT_FALSE(pipes.open());
}

TEST(OutputPipes, OnePipeForBothStreamsKeepsTheOrderOfTheWrites) {
  auto created = OutputPipes::create(StderrRoute::Stdout);
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  OutputPipes pipes = std::move(*created);
  EXPECT_FALSE(pipes.err.valid());
  ASSERT_TRUE(pipes.write_err.valid());
  EXPECT_NE(pipes.write_err.get(), pipes.write_out.get());

  put(pipes.write_out, "o1 ");
  put(pipes.write_err, "e1 ");
  put(pipes.write_out, "o2");
  pipes.write_out.reset();
  pipes.write_err.reset();
  Recorder sink;
  pipes.drain(sink);
  EXPECT_EQ(sink.of(Stream::Stdout), "o1 e1 o2");
  EXPECT_EQ(sink.of(Stream::Stderr), "");
  EXPECT_FALSE(pipes.open());
}

TEST(OutputPipes, DrainEndsWhileAWriterIsStillAlive) {
  auto created = OutputPipes::create();
  ASSERT_TRUE(created.has_value()) << created.error().describe();
  OutputPipes pipes = std::move(*created);
  put(pipes.write_out, "left behind");
  // The write ends stay open, as in a background process of a host run: drain() must not
  // wait for their end of file.
  Recorder sink;
  pipes.drain(sink);
  EXPECT_EQ(sink.of(Stream::Stdout), "left behind");
  EXPECT_FALSE(pipes.open());
}

}  // namespace
}  // namespace pisandbox::sandbox
