// pisandbox::sandbox::OutputPipes — a command's stdout and stderr as two pipes read into an
// OutputSink; shared by the sandbox runner and the host runner (RunOptions::output).
#pragma once

#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/command.hpp"

namespace pisandbox::sandbox {

/// Both pipes: the read ends (non-blocking, close-on-exec) stay here; the write ends go to
/// the command.
struct OutputPipes {
  core::UniqueFd out, err;              ///< read ends; reset at end of file
  core::UniqueFd write_out, write_err;  ///< write ends, to hand to the command and close

  /// Creates both pipes; with StderrRoute::Stdout only the stdout pipe, whose write end
  /// `write_err` duplicates (`err` stays closed). Errors: `pipe2(): <ENAME> (…)` (`pipe()` on
  /// Apple, which has no pipe2), `fcntl(F_DUPFD_CLOEXEC): <ENAME> (…)`.
  [[nodiscard]] static core::Result<OutputPipes> create(StderrRoute route = StderrRoute::Own);

  /// Whether either read end is still open.
  [[nodiscard]] bool open() const { return out.valid() || err.valid(); }

  /// Reads what is available now into `sink`, at most 16 reads of 64 KiB per pipe (so a
  /// flooding command cannot starve the caller's timeout); a pipe at end of file is closed.
  void pump(OutputSink& sink);

  /// Reads until each pipe is empty right now or at end of file, then closes both: for a
  /// command whose writers may outlive it (host runs), after it has exited.
  void drain(OutputSink& sink);
};

}  // namespace pisandbox::sandbox
