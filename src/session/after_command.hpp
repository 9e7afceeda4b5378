// pisandbox::session — the lines said after a command that explain what its own errors do not.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "policy/sandbox_policy.hpp"
#include "sandbox/command.hpp"
#include "session/host_socket_setup.hpp"

namespace pisandbox::session {

/// What the lines after a command read: the command's policy, its host Unix sockets (which
/// were refused), and where a line goes (without its `pi-sandbox: ` prefix).
struct AfterCommand {
  const policy::SandboxPolicy& policy;
  HostSockets& host_sockets;
  const std::function<void(const std::string&)>& say;
};

/// Says, after the command whose words are `words` (its argv, or its shell text's
/// policy::path_pieces()) ran in `cwd` with `outcome`:
/// - after a failure, one line for each link out of the workspace it named that leads where the
///   sandbox hides it or keeps it read-only (docs/security.md, "Links out of the workspace");
/// - after a failure, or after a refusal of the signing agent's socket, the signing lines
///   (docs/configuration.md, "Signed commits");
/// - after a failure, one line for each local remote its git read that the sandbox hides, and
///   after any command that ran, one for each it pushed to that the sandbox shows copy-on-write
///   or read-only (docs/security.md, "Remotes in the hidden home").
void explain_after_command(const AfterCommand& after, const sandbox::Outcome& outcome,
                           const std::vector<std::string>& words, const std::filesystem::path& cwd);

}  // namespace pisandbox::session
