// pisandbox::sandbox — what a runner runs and what comes back (platform-neutral).
#pragma once

#include <chrono>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pisandbox::sandbox {

/// One command to run.
///   argv: program and arguments; argv[0] is looked up in the command's PATH. The `-c` form
///         is {"/bin/bash", "-c", <string>} (reference item 6).
///   cwd:  absolute working directory (the workspace).
///   env:  the command's whole environment, as "NAME=value" strings.
struct Command {
  std::vector<std::string> argv;
  std::filesystem::path cwd;
  std::vector<std::string> env;
};

/// How long a command may run and how it can be cancelled.
///   timeout:   wall-clock limit in milliseconds; none means unlimited.
///   cancel_fd: a descriptor that becomes readable to cancel the command (a signalfd for
///              `run`, an eventfd for `serve`), or -1.
struct RunOptions {
  std::optional<std::chrono::milliseconds> timeout;
  int cancel_fd = -1;
};

/// The command exited with `code` (0-255).
struct Exited {
  int code;
};
/// The command died of signal `signal`.
struct Signaled {
  int signal;
};

/// Why a command has no exit status of its own.
enum class RunFailureKind {
  TimedOut,      ///< the timeout passed; the whole sandbox was killed
  Aborted,       ///< cancel_fd became readable; the whole sandbox was killed
  LaunchFailed,  ///< the sandbox could not be set up; nothing ran
};

/// A failure with its user-facing message (for LaunchFailed: the failing step, syscall,
/// path and errno, then an optional hint line).
struct RunFailure {
  RunFailureKind kind;
  std::string message;
};

/// The result of running a command.
using Outcome = std::expected<std::variant<Exited, Signaled>, RunFailure>;

}  // namespace pisandbox::sandbox
