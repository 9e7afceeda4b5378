#include "sandbox/output_pipes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <span>
#include <utility>

namespace pisandbox::sandbox {

namespace {

/// Reads at most `rounds` times from `fd` into `sink`; resets `fd` at end of file (and,
/// when `until_empty`, also once nothing more is there).
void read_into(core::UniqueFd& fd, Stream stream, OutputSink& sink, int rounds, bool until_empty) {
  char buffer[65536];
  for (int round = 0; fd.valid() && round < rounds; ++round) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n > 0) {
      sink.write(stream, std::string_view(buffer, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && !until_empty) return;
    fd.reset();
  }
}

}  // namespace

core::Result<OutputPipes> OutputPipes::create(StderrRoute route) {
  OutputPipes pipes;
  std::pair<core::UniqueFd*, core::UniqueFd*> ends[2] = {{&pipes.out, &pipes.write_out},
                                                         {&pipes.err, &pipes.write_err}};
  const int count = route == StderrRoute::Stdout ? 1 : 2;
  for (auto [read_end, write_end] : std::span(ends, count)) {
    int p[2];
#ifdef __APPLE__
    // No pipe2(2) on macOS: close-on-exec right after (its launcher spawns with
    // POSIX_SPAWN_CLOEXEC_DEFAULT, which does not depend on it).
    if (::pipe(p) != 0) return core::fail_errno("pipe()");
    read_end->reset(p[0]);
    write_end->reset(p[1]);
    for (const int fd : p) (void)::fcntl(fd, F_SETFD, FD_CLOEXEC);
#else
    if (::pipe2(p, O_CLOEXEC) != 0) return core::fail_errno("pipe2()");
    read_end->reset(p[0]);
    write_end->reset(p[1]);
#endif
    (void)::fcntl(p[0], F_SETFL, O_NONBLOCK);
  }
  if (route == StderrRoute::Stdout) {
    // One pipe for both: the kernel keeps the order of the command's writes to fd 1 and 2.
    const int dup = ::fcntl(pipes.write_out.get(), F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return core::fail_errno("fcntl(F_DUPFD_CLOEXEC)");
    pipes.write_err.reset(dup);
  }
  return pipes;
}

void OutputPipes::pump(OutputSink& sink) {
  read_into(out, Stream::Stdout, sink, 16, false);
  read_into(err, Stream::Stderr, sink, 16, false);
}

void OutputPipes::drain(OutputSink& sink) {
  read_into(out, Stream::Stdout, sink, 1 << 30, true);
  read_into(err, Stream::Stderr, sink, 1 << 30, true);
}

}  // namespace pisandbox::sandbox
