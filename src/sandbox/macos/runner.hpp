// pisandbox::sandbox::macos — one command under a SandboxPolicy, end to end on macOS
// (docs/macos.md): the private directories, the proxy on the host's loopback with a
// per-command credential, the Seatbelt profile, the home layer's links, then sandbox-exec.
//
// Plain POSIX, built on every platform: on Linux the unit test unit_macos_runner runs it whole
// with a stand-in for sandbox-exec, which checks its arguments and runs the command unconfined
// (Seatbelt runs only on a Mac).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "policy/sandbox_policy.hpp"
#include "sandbox/command.hpp"
#include "sandbox/macos/launch_plan.hpp"

namespace pisandbox::sandbox::macos {

/// Receives warning lines for the user (as sandbox::linux_::WarningSink).
using WarningSink = std::function<void(const std::string&)>;

/// What the runner takes besides the policy, the command and its RunOptions.
///   sandbox_exec: the program run as `<sandbox_exec> -p <profile> -- <argv...>` (absolute);
///     Apple's by default. The unit test on Linux substitutes a stand-in.
///   allowed_sockets: hostIPC.allowedSockets expanded for this command (policy::allowed_sockets(),
///     absolute paths). Seatbelt cannot ask anyone, so the profile lists them and
///     RunOptions::host_socket is never called; an entry inside a path the command may write
///     allows nothing (as on Linux: docs/host-ipc.md, "Host sockets") and is left out.
struct RunnerOverrides {
  std::string sandbox_exec = std::string(kSandboxExec);
  std::vector<std::filesystem::path> allowed_sockets = {};
};

/// The directory the private directories are made in: the caller's TMPDIR when it is an
/// absolute path (on macOS a per-user `/var/folders/.../T/`), else `/tmp`.
std::filesystem::path private_dirs_parent();

/// Runs `command` under `policy` (the same meaning and Outcome as
/// sandbox::linux_::run_sandboxed()), in this order:
///   1. make_private_dirs() under private_dirs_parent();
///   2. the proxy's two listeners on 127.0.0.1, ports chosen by the kernel (HTTP, then SOCKS5:
///      open_loopback_listener()) and a fresh credential (proxy::generate_credential());
///   3. the protected paths (the policy's and the workspace scan's, merged as on Linux), the
///      profile (plan_seatbelt(), render()) with the real directories, ports and sockets;
///   4. the home layer's links (plan_home_links(), make_home_links());
///   5. the command's environment: `command.env` less its proxy variables, then
///      policy::proxy_environment() with the two ports and the credential (its
///      JAVA_TOOL_OPTIONS merged with the caller's part of the old one), then plan_launch()'s
///      TMPDIR, TMP, TEMP and HOME;
///   6. `options.proxy` started on both listeners with the credential (ProxyListeners::username,
///      password); without one the listeners stay open and are never accepted, so the ports
///      the profile allows lead nowhere;
///   7. launch() with `options`; then the proxy's handle is destroyed (the proxy stops), then the
///      private directories are removed.
/// A failure of steps 1-6 is RunFailureKind::LaunchFailed naming the step and the call
/// (`private directories: mkdtemp(/tmp/pi-sandbox.XXXXXX): EACCES (...)`); nothing ran.
/// Warnings (the workspace contains the home) go to `warn` as whole lines.
Outcome run_sandboxed(const policy::SandboxPolicy& policy, Command command,
                      const RunOptions& options, const WarningSink& warn,
                      const RunnerOverrides& overrides = {});

}  // namespace pisandbox::sandbox::macos
