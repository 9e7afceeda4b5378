// pisandbox::serve — `pi-sandbox serve`: runs commands for a host over JSON lines on
// stdin/stdout (docs/protocol.md). One single-threaded event loop multiplexes the host and
// one worker process per command (worker.hpp), so each command has its own sandbox, proxy,
// approvals and clean-up, exactly like a separate `run`.
#pragma once

#include <string>

namespace pisandbox::serve {

/// What serve passes on to every worker.
///   config: --config FILE (empty: the default locations).
///   reviewer: --reviewer PROGRAM (empty: the configuration's `approval.reviewer`).
struct ServeArgs {
  std::string config;
  std::string reviewer;
};

/// Serves requests from stdin until `shutdown`, the end of stdin, or SIGINT/SIGTERM/SIGHUP;
/// then stops every worker (SIGTERM, SIGKILL after 10 seconds) and returns 0.
[[nodiscard]] int serve(const ServeArgs& args);

}  // namespace pisandbox::serve
