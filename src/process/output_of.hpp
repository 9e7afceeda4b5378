// pisandbox::process — a short program on the host that is given a few bytes on stdin and
// answers on stdout: the host's `git credential fill` for the credential helper inside
// (docs/network.md, "Credentials for HTTPS").
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace pisandbox::process {

/// What output_of() runs.
///   argv:    the program (an absolute path, no PATH search) and its arguments; no shell.
///   env:     its whole environment, `NAME=value` strings.
///   cwd:     its working directory.
///   input:   written to its stdin, which is then closed.
///   timeout: how long it may take to answer and exit, in seconds.
///   max_output: most bytes of stdout kept; more is an error.
struct OutputOf {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd = "/";
  std::string input;
  std::chrono::seconds timeout{30};
  std::size_t max_output = 64 * 1024;
};

/// Runs `run` in a process group of its own with stderr discarded (/dev/null: what a helper
/// prints there is not shown, since it may name more than the sandbox may see) and returns its
/// stdout once it exited with status 0. The whole group is killed (SIGKILL) when it times out,
/// prints more than max_output bytes or has exited while children of it still hold stdout.
/// Errors: `<program> could not be started: <call>: <ENAME> (<strerror>)`, `<program> did not
/// answer within <n> s`, `<program> printed more than <n> bytes`, `<program> exited with status
/// <n>`, `<program> was killed by signal <n>`, or a failed pipe2/poll with errno.
[[nodiscard]] core::Result<std::string> output_of(const OutputOf& run);

}  // namespace pisandbox::process
