// pisandbox::serve — `pi-sandbox serve-worker` (internal): one command of `pi-sandbox serve`,
// in a process of its own so that every command is as independent as a separate `run`. Its
// stdin is serve's control pipe (first line: the exec request; then approval responses and
// serve's own ledger replies and settle lines), its stdout the event pipe (complete JSON lines,
// docs/protocol.md, and the ledger lines serve keeps to itself: serve/ledger_lines.hpp), fd 3
// the command's stdin.
#pragma once

#include <string>

namespace pisandbox::serve {

/// The options serve gives each worker.
///   config / reviewer: serve's own --config and --reviewer (empty: not given).
///   subagent: serve itself runs for a subagent (hostipc::is_subagent of its environment).
///   binary_at_start: serve's binary when serve started (session::PolicyArgs::binary_at_start).
///   no_cgroup_said: an earlier command of this serve may have said that commands get no
///     cgroup; this one does not say it again (once per session: docs/security.md, "Resource
///     limits").
struct WorkerArgs {
  std::string config;
  std::string reviewer;
  bool subagent = false;
  std::string binary_at_start;
  bool no_cgroup_said = false;
};

/// Reads the exec request, runs the command through session::execute() and writes its
/// events, the last one `exit`; then ends the process (_exit(0)). Returns 2 only when the
/// first control line is not an exec request.
[[nodiscard]] int run_worker(const WorkerArgs& args);

}  // namespace pisandbox::serve
