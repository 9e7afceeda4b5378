// pisandbox::approval::ReviewerProcess — the automatic reviewer as a program: the request
// as one JSON object on stdin, one JSON verdict on stdout.
//
// Source: docs/compatibility.md, "Approvals" (`--reviewer PROGRAM` or `approval.reviewer`,
// run without a shell; bad output, a non-zero exit or no answer within the timeout make
// review unavailable) and compatibility C78 (the output contract, parse_reviewer_output).
#pragma once

#include <chrono>
#include <expected>
#include <string>
#include <vector>

#include "approval/broker.hpp"

namespace pisandbox::approval {

/// Runs a reviewer program once per request.
///   argv:    the program (an absolute path: approval.reviewer and --reviewer accept nothing
///            else, docs/configuration.md) and its arguments; no shell is involved, no PATH
///            search.
///   timeout: how long the program may take to answer and exit, in seconds.
///   env:     its whole environment, `NAME=value` strings (the session's
///            host_program_environment(): docs/security.md, "What pi-sandbox starts on the
///            host").
/// The program runs in its own process group with stderr inherited; when it times out,
/// prints more than kMaxReviewerOutputBytes, or exits while children of it still run, the
/// whole group is killed (SIGKILL).
class ReviewerProcess final : public Reviewer {
 public:
  ReviewerProcess(std::vector<std::string> argv, std::chrono::seconds timeout,
                  std::vector<std::string> env);

  /// Errors (the words after `Automatic review is unavailable: `):
  ///   `reviewer <program> could not be started: <ENAME> (<strerror>)`,
  ///   `reviewer did not answer within <n> seconds`,
  ///   `reviewer output is larger than 65536 bytes`,
  ///   `reviewer exited with status <n>`, `reviewer was killed by signal <n> (<NAME>)`,
  ///   any parse_reviewer_output() message, or a failed pipe/poll system call.
  /// The program's stdin is the request's JSON (to_json()) with `"userRetry":true` added when
  /// `evidence.user_retry` (docs/approvals.md, "The request").
  [[nodiscard]] std::expected<ReviewerVerdict, std::string> review(
      const BoundaryRequest& request, const ReviewEvidence& evidence) override;

 private:
  std::vector<std::string> argv_;
  std::chrono::seconds timeout_;
  std::vector<std::string> env_;
};

/// Kills (SIGKILL) the process group of every reviewer still running in this process, for a
/// pi-sandbox that is about to exit while a decision is pending: no reviewer outlives it.
/// Async-signal-unsafe (takes a mutex); call it from normal code before _exit.
void kill_running_reviewers();

}  // namespace pisandbox::approval
