// pisandbox::hostipc — the host-IPC fallback: a command that needs a host Unix socket may run
// on the host, outside the sandbox, after an exact one-shot approval.
//
// Source: docs/host-ipc.md, "Two ways in"; compatibility C59–C67 (the 0.4.0 seed,
// `src/host-ipc.ts`). This layer makes no system call itself: it is a function of a sandbox
// runner, a host runner, an approver and a clock, all injected.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "approval/boundary_request.hpp"
#include "approval/clock.hpp"
#include "approval/result.hpp"
#include "approval/terminal_prompt.hpp"
#include "config/config.hpp"
#include "sandbox/command.hpp"

namespace pisandbox::hostipc {

/// The most stderr of the sandboxed attempt that is kept to look for a Unix-socket refusal:
/// the last 64 KiB (compatibility C62).
inline constexpr std::size_t kMaxStderrTailBytes = 64 * 1024;

/// The environment variable that marks a built-in subagent (compatibility C66).
inline constexpr std::string_view kSubagentDepthVariable = "PI_SANDBOX_SUBAGENT_DEPTH";

/// The refusal reason for subagents (compatibility C66).
inline constexpr std::string_view kSubagentReason =
    "builtin subagents do not support host forwarding";

/// The line printed before an approved retry's host output (compatibility C63).
inline constexpr std::string_view kRetryBanner =
    "\n--- pi-sandbox: approved host-IPC retry (outside OS sandbox) ---\n";

/// The warning shown with an EPERM retry question (compatibility C58); the preflight one is
/// approval::kHostIpcWarning.
inline constexpr std::string_view kRetryWarning =
    "Warning: the first sandboxed attempt may already have had partial side effects. The "
    "retry runs on the host outside the OS sandbox.";

/// `toolInputPreview` of the two triggers (compatibility C67).
inline constexpr std::string_view kPreflightPreview =
    "A configured prefix requested approval before sandbox execution.";
inline constexpr std::string_view kRetryPreview =
    "The sandboxed attempt failed and may already have had partial side effects.";

/// The first configured prefix that `command`, trimmed of ASCII whitespace, starts with and
/// that is followed by whitespace or the end (compatibility C60): `tmux` matches `tmux` and
/// `  tmux ls`, not `tmuxinator` nor `env tmux ls`. nullopt when none matches.
[[nodiscard]] std::optional<std::string> matching_preflight_prefix(
    std::string_view command, const std::vector<std::string>& prefixes);

/// Whether stderr text reads like a refused Unix socket (compatibility C62): it contains
/// `operation not permitted` and one of `socket`, `connect`, `ipc`, ASCII case-insensitive.
[[nodiscard]] bool is_unix_socket_refusal(std::string_view stderr_text);

/// Whether `PI_SANDBOX_SUBAGENT_DEPTH` in `env` ("NAME=value" strings) is a number > 0 (as
/// JavaScript's Number(): surrounding whitespace allowed, decimal, e.g. `1`, ` 2 `, `1.5`).
[[nodiscard]] bool is_subagent(const std::vector<std::string>& env);

/// What one host-IPC-aware run is.
///   command:  the shell command string as the agent gave it.
///   cwd:      its working directory (absolute).
///   timeout:  the whole call's limit in milliseconds (sandboxed attempt, approval and host
///             run together), or none.
///   subagent: is_subagent() of the command's or pi-sandbox's environment.
///   agent_name: `agentName` of the request (absent for the main agent).
///   program: the file the command's first word runs on the host, found through the host
///            run's cleaned PATH (docs/security.md, "What pi-sandbox starts on the host"), when
///            the session could tell; the question and the audit line name it.
struct Invocation {
  std::string command;
  std::string cwd;
  std::optional<std::chrono::milliseconds> timeout;
  bool subagent = false;
  std::optional<std::string> agent_name;
  std::optional<std::string> program = {};
};

/// Runs the command once, in the sandbox or on the host, with at most `timeout`
/// milliseconds, its output going to `output`.
using Runner = std::function<sandbox::Outcome(std::optional<std::chrono::milliseconds> timeout,
                                              sandbox::OutputSink& output)>;

/// Asks for one approval; `warning` is the line shown with the question. Implemented over
/// approval::Broker::approve(), which consumes the grant before returning allow.
using Approver = std::function<approval::ApprovalResult(const approval::BoundaryRequest&,
                                                        std::string_view warning)>;

/// The collaborators of run().
///   new_id(kind): a fresh request id, `sandbox-runtime-<kind>-<uuid>`.
///   host_socket_refused: whether the sandboxed attempt was refused a host Unix socket (asked
///     after it; may be empty): a retry trigger whatever its stderr says (docs/host-ipc.md, "Two
///     ways in": git's `gpg failed to sign the data` names no socket).
struct Collaborators {
  Runner sandboxed;
  Runner host;
  Approver approve;
  const approval::Clock& clock;
  std::function<std::string(std::string_view kind)> new_id;
  std::function<bool()> host_socket_refused = {};
};

/// The approval request for a host run (compatibility C67): surface `host-ipc`, operation
/// `execute-host`, the full command and cwd, matchedPolicy rule
/// `preflight-prefix:<prefix>` or `unix-socket-eperm`, and the matching toolInputPreview;
/// `resolvedPath` is Invocation::program when known (so a grant is for that file).
///   prefix: the matched prefix for a preflight, nullopt for the EPERM retry.
[[nodiscard]] approval::BoundaryRequest host_ipc_request(const Invocation& invocation,
                                                         const std::optional<std::string>& prefix,
                                                         std::string id);

/// Runs `invocation` under the `hostIPC` configuration (docs/host-ipc.md, "Two ways in"):
///   - mode off: the sandboxed runner only;
///   - a preflight prefix matches: subagent → `pi-sandbox: host-IPC execution denied:
///     builtin subagents do not support host forwarding` + exit 1, nothing asked; else ask
///     (trigger preflight-prefix); deny → `pi-sandbox: host-IPC execution denied[: reason]`
///     + exit 1; allow → the host runner only (the sandbox never runs);
///   - otherwise the sandboxed attempt, keeping the last kMaxStderrTailBytes of its stderr;
///     with retryOnUnixSocketError, an exit code other than 0 (not a signal, not a timeout,
///     abort or launch failure) and is_unix_socket_refusal(stderr tail) or a refused host
///     socket (Collaborators::host_socket_refused): subagent → print
///     `pi-sandbox: host-IPC retry refused: …` and return the sandboxed result; else ask
///     (trigger unix-socket-eperm); deny → the sandboxed result unchanged; allow →
///     kRetryBanner then the host runner. One retry, never recursive.
/// The host runner gets only what is left of the timeout (measured on `clock` from the
/// call's start); if nothing is left the result is RunFailureKind::TimedOut without a host
/// run. pi-sandbox's own lines go to `output` as stderr, each ending in "\n".
[[nodiscard]] sandbox::Outcome run(const config::HostIpcConfig& config,
                                   const Invocation& invocation, const Collaborators& with,
                                   sandbox::OutputSink& output);

}  // namespace pisandbox::hostipc
