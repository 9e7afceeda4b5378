// pisandbox::session — one command's life, the one entry point that `run` and each `serve`
// worker share: policy, approvals, the proxy, the host-IPC fallback, the sandbox and the
// outcome (docs/ARCHITECTURE.md, "The life of one command").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "approval/broker.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/command.hpp"
#include "session/approval_setup.hpp"
#include "session/policy_setup.hpp"

namespace pisandbox::sandbox::linux_ {
struct ReadyOffer;  // sandbox/linux/runner.hpp: a sandbox made before its command
struct ReadyPlan;   // sandbox/linux/runner.hpp: its plans
}  // namespace pisandbox::sandbox::linux_

namespace pisandbox::session {

class RecordCheck;  // record_check.hpp: the comparison of a sandbox made ahead's record

/// A sandbox made ahead (prepare_ready()) with what it was made from: the policy and the
/// configuration, the policy's arguments and the process environment then (which the policy
/// reads: the home, the toolchains, git's configuration). A command whose arguments and
/// environment are these, while the offer's record of the host holds, gets this policy and
/// these plans as they are (docs/security.md, "A sandbox made ahead").
struct ReadyAhead {
  std::shared_ptr<sandbox::linux_::ReadyOffer> offer;
  /// The comparison of the offer's record, waiting for the command's request on a thread of
  /// its own (record_check.hpp).
  std::shared_ptr<RecordCheck> check;
  /// The plans the sandbox was made from, kept apart from it for the second way when the
  /// record does not hold at the gate (ahead_check()).
  std::shared_ptr<const sandbox::linux_::ReadyPlan> made;
  policy::SandboxPolicy policy;
  config::LoadedConfig loaded;
  PolicyArgs args;
  std::vector<std::string> environment;
  /// What the command's session computes from the policy, the configuration and `environment`
  /// above, computed with them (`NAME=value` each): the command's environment inside
  /// (policy::command_environment(), for a request without `env_keep`) and the environment of
  /// what it starts on the host (host_program_environment(), whose host reads the offer's
  /// record holds). A command that takes the policy above takes these (ahead_check()).
  std::vector<std::string> command_env;
  std::vector<std::string> host_env;
};

/// What to run.
///   timeout_seconds: 0 for none.
///   shell_command / argv: exactly one is set (`-c` runs /bin/bash -c).
///   scope_key: the approval circuit breaker's scope; empty: one scope for this command.
///   agent_name: `agentName` of approval requests (subagents), absent for the main agent.
///   subagent: the caller is a built-in subagent (docs/host-ipc.md), besides what the environment
///   says.
///   env_keep: exact names the credential filter keeps although a default rule would remove
///   them (serve's `env_keep`, docs/protocol.md); `environment.remove` still wins.
///   approval_command: the command as approval requests name it; absent: the shell command or
///   the argv joined.
struct RunArgs {
  PolicyArgs policy;
  ApprovalArgs approval;
  double timeout_seconds = 0;
  std::string shell_command;
  std::vector<std::string> argv;
  std::string scope_key;
  std::optional<std::string> agent_name;
  bool subagent = false;
  std::vector<std::string> env_keep;
  std::optional<std::string> approval_command;
};

/// How a command talks to its caller.
///   output:  null: the command writes to pi-sandbox's own stdout and stderr (a terminal
///            works); else all its output goes to this sink (through pipes).
///   human:   who answers approvals; null: the terminal (TerminalPrompt) unless --no-prompt.
///   message: pi-sandbox's own lines for the user (a refused connection, a timeout, the
///            host-IPC banner goes through `output` instead), without the `pi-sandbox: `
///            prefix; null: `pi-sandbox: <line>` on stderr.
///   ledger:  the session's breaker states and session answers (serve: kept by the serve
///            process for all its commands); null: the run's own (approval::LocalLedger).
///   denied:  told of each refused crossing: surface (`network`, `host-ipc`), target
///            (`host:port`, the command), reason, who refused (an approval source such
///            as `human`, `reviewer`, `unavailable`, or `policy`: NetworkDecider's
///            kPolicySource) and the user's override of an automatic denial (`retry`,
///            `break-glass`, empty for none: approval::ApprovalResult::recovery); may be
///            empty. Called from any thread.
///   stdin_fd: the command's stdin, -1 for pi-sandbox's own.
///   cancel_fd: readable to cancel the command (see sandbox::RunOptions), or -1.
struct RunIo {
  sandbox::OutputSink* output = nullptr;
  std::shared_ptr<approval::HumanPrompt> human;
  std::shared_ptr<approval::ScopeLedger> ledger;
  std::function<void(const std::string&)> message;
  std::function<void(std::string_view surface, const std::string& target, const std::string& reason,
                     std::string_view source, std::string_view recovery)>
      denied;
  int stdin_fd = -1;
  int cancel_fd = -1;
  /// With `output`: whether the command's stderr is read as a stream of its own or as part
  /// of stdout, in the order written (sandbox::StderrRoute).
  sandbox::StderrRoute stderr_route = sandbox::StderrRoute::Own;
  /// Told after the command of each resource limit it reached (the out-of-memory line goes
  /// to `message` as well); may be empty.
  std::function<void(sandbox::Limit)> limit_reached;
  /// Whether to say now that the command has no cgroup (sandbox::RunOptions::say_no_cgroup);
  /// empty: for every command.
  std::function<bool()> say_no_cgroup;
  /// Whether to say now that the workspace contains the home
  /// (sandbox::RunOptions::say_home_workspace); empty: for every command.
  std::function<bool()> say_home_workspace;
  /// A sandbox made ahead for this command (prepare_ready()); used only when its record of
  /// the host holds (sandbox::linux_::host_unchanged()) or its plans, computed again, are
  /// equal (sandbox::linux_::still_holds()); discarded otherwise; may be null.
  std::shared_ptr<ReadyAhead> ready;
  /// Receives the end of the sandbox once the command's result is complete
  /// (sandbox::RunOptions::teardown), then what execute() set up for the command (freed when
  /// the caller drops it); empty: execute() returns after both.
  std::function<void(std::shared_ptr<void>)> teardown;
};

/// `command timed out after <seconds> seconds`, the seconds as given (`1`, `0.5`): what
/// `run` prints and `serve` reports for RunFailureKind::TimedOut.
[[nodiscard]] std::string timed_out_message(double seconds);

/// What pi-sandbox says (after `pi-sandbox: ` on stderr; a `message` in `serve`) once after a
/// command that tried to reach the network without the proxy (docs/network.md, "Clients that
/// ignore the proxy").
inline constexpr std::string_view kDirectConnectionHint =
    "the command tried to connect directly, not through the proxy; some clients ignore "
    "HTTP_PROXY: see docs/network.md, \"Clients that ignore the proxy\"";

/// What pi-sandbox says (after `pi-sandbox: `; a `message` in `serve`) after a command that
/// left the tmpfs budget full (docs/security.md, "Resource limits"), `budget_bytes` its size:
/// `the sandbox's private tmpfs is full: the tmpfs budget of <N> MiB (limits.tmpfs), shared by
/// /tmp, /var/tmp, /dev/shm and the hidden home's caches, was reached; raise limits.tmpfs in the
/// configuration`.
[[nodiscard]] std::string tmpfs_full_message(std::uint64_t budget_bytes);

/// The caller's own environment (`environ`), unchanged: what an approved host run and a
/// serve worker without an `env` of its own get.
[[nodiscard]] std::vector<std::string> caller_environment();

/// Blocks SIGINT, SIGTERM and SIGHUP and returns a non-blocking signalfd that reads them:
/// what cancels a command (RunIo::cancel_fd) or stops serve.
[[nodiscard]] core::UniqueFd cancel_signals();

/// A sandbox made ahead of a command like `args` (Linux; docs/ARCHITECTURE.md, "A sandbox
/// made ahead"): the record of every host input of the policy and the plans
/// (sandbox::linux_::record_host_reads(), taken again once its clock tick has passed when it is
/// racy), then the policy built as execute() builds it, sandbox::linux_::plan_ready() and
/// launch_ready(); a record that no longer holds once the sandbox is made is kept as incomplete.
/// Null when none can be made (the policy fails, strict protection's placeholders, macOS):
/// the command then gets its sandbox when it comes, as without one. The calling process must
/// be single-threaded.
[[nodiscard]] std::shared_ptr<ReadyAhead> prepare_ready(const RunArgs& args);

/// Runs one command (docs/security.md, docs/network.md, docs/host-ipc.md): builds the policy from
/// the trusted configuration, gives the command its proxy (every destination decided by the
/// configuration's lists and the approval broker), applies the host-IPC fallback for shell
/// commands, and waits. Approval questions still open when the command has ended end then
/// (ApprovalSetup::end_questions()). Returns the command's outcome; a policy that cannot be
/// built is LaunchFailed with its message.
[[nodiscard]] sandbox::Outcome execute(const RunArgs& args, const RunIo& io);

}  // namespace pisandbox::session
