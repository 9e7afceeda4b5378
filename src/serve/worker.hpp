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
///   no_cgroup_said: an earlier command of this serve may have said the session's warnings,
///     that commands get no cgroup and that the workspace contains the home; this one does not
///     say them again (once per session: docs/security.md, "Resource limits").
///   ready: a worker kept waiting (docs/ARCHITECTURE.md, "A sandbox made ahead"): its first
///   control line is an exec request whose command is not run, only its sandbox made
///   (session::prepare_ready()); the second is the exec it runs, in that sandbox while it still
///   holds.
struct WorkerArgs {
  std::string config;
  std::string reviewer;
  bool subagent = false;
  std::string binary_at_start;
  bool no_cgroup_said = false;
  bool ready = false;
};

/// Reads the exec request, runs the command through session::execute() and writes its
/// events, the last one `exit`; then ends the process (_exit(0)). With WorkerArgs::ready it
/// first reads the request to prepare for and makes that sandbox, then waits for the exec; at
/// the end of its stdin or on SIGTERM, SIGINT or SIGHUP before the exec it discards the
/// sandbox and ends (_exit(0)) without an event. Returns 2 only when a control line expected
/// to be an exec request is not one.
[[nodiscard]] int run_worker(const WorkerArgs& args);

}  // namespace pisandbox::serve
