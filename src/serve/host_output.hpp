// pisandbox::serve::HostOutput — the events on their way to the host: one queue, in the order
// serve emits them, written to serve's non-blocking stdout as fast as the host reads. A host
// that stops reading blocks nobody: the queue grows up to a bound, then serve stops reading
// the workers' event pipes, whose writes then wait (backpressure, pipe(7)), so no event is
// lost or reordered and serve's memory stays bounded (docs/protocol.md, "Flow control").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "serve/sys_calls.hpp"

namespace pisandbox::serve {

class HostOutput {
 public:
  /// Bytes queued from which serve stops reading the workers' events (1 MiB).
  static constexpr std::size_t kEventsBound = std::size_t{1} << 20;
  /// Bytes queued from which serve stops reading requests too (4 MiB): only serve's own
  /// answers (`started`, `error`) are queued then, and a host that sends requests without
  /// reading their answers cannot grow the queue past this either.
  static constexpr std::size_t kRequestsBound = 4 * kEventsBound;

  /// `fd`: the host's end, made non-blocking by the caller.
  HostOutput(SysCalls& sys, int fd) : sys_(sys), fd_(fd) {}

  /// Queues `line` (a JSON line ending in LF) after everything queued before. Nothing once
  /// the host is gone.
  void push(std::string_view line);

  /// Writes what the descriptor takes now: until all is written, the write would block
  /// (EAGAIN: serve polls for POLLOUT before the next try), or the host is gone (any other
  /// error, EPIPE when it closed its end: everything queued is dropped). EINTR is retried.
  void flush();

  /// Bytes queued and not yet written.
  [[nodiscard]] std::size_t queued() const { return queue_.size() - written_; }
  /// Whether serve should poll the descriptor for POLLOUT.
  [[nodiscard]] bool waiting() const { return queued() > 0; }
  /// Whether the host has closed its end (or writing to it failed otherwise).
  [[nodiscard]] bool gone() const { return gone_; }

 private:
  SysCalls& sys_;
  int fd_;
  std::string queue_;
  std::size_t written_ = 0;  ///< the prefix of queue_ already written
  bool gone_ = false;
};

}  // namespace pisandbox::serve
