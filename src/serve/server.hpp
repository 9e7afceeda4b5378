// pisandbox::serve — `pi-sandbox serve`: runs commands for a host over JSON lines on
// stdin/stdout (docs/protocol.md). One single-threaded event loop multiplexes the host and
// one worker process per command (worker.hpp), so each command has its own sandbox, proxy,
// approvals and clean-up, exactly like a separate `run`.
#pragma once

#include <unistd.h>

#include <string>

#include "serve/sys_calls.hpp"

namespace pisandbox::serve {

/// What serve passes on to every worker.
///   config: --config FILE (empty: the default locations).
///   reviewer: --reviewer PROGRAM (empty: the configuration's `approval.reviewer`).
struct ServeArgs {
  std::string config;
  std::string reviewer;
};

/// Where serve talks to the host and how it reaches the kernel; tests give their own.
///   requests: the descriptor the host writes requests to (stdin).
///   events: the descriptor serve writes events to (stdout); serve makes it non-blocking while
///     it runs (fcntl(2), O_NONBLOCK: a host that stops reading must not stop serve) and
///     restores its flags when it returns.
///   sys: the system calls of the loop and of starting workers (nullptr: os_sys_calls()).
///   ready_ahead: keep the next sandbox of each workspace ready (docs/ARCHITECTURE.md, "A
///     sandbox made ahead"); off for stand-in workers that make no sandbox.
struct ServeIo {
  int requests = STDIN_FILENO;
  int events = STDOUT_FILENO;
  SysCalls* sys = nullptr;
  bool ready_ahead = true;
};

/// Serves requests from stdin until `shutdown`, the end of stdin, or SIGINT/SIGTERM/SIGHUP;
/// then stops every worker (SIGTERM, SIGKILL after 10 seconds), writes the events still queued
/// (after a signal only until those 10 seconds have passed: a host that does not read them is
/// not waited for) and returns 0. Returns 1, naming the call and errno on stderr, when serve
/// cannot go on (signalfd(2), poll(2) or the fcntl(2) of stdout fails): docs/protocol.md.
[[nodiscard]] int serve(const ServeArgs& args, const ServeIo& io = {});

}  // namespace pisandbox::serve
