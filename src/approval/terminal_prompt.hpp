// pisandbox::approval::TerminalPrompt — asks the human on the controlling terminal.
//
// Source: docs/compatibility.md, "Approvals" and compatibility C57 (title, target, options)
// and C58 (the host-IPC warning lines); docs/approvals.md, "The question and its answers" (the
// choices' order, Enter and Esc = Deny, the `Command:` and deadline lines); docs/security.md,
// "The terminal" (the command's output held while the question is open).
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include "approval/boundary_request.hpp"
#include "approval/broker.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::approval {

/// The warning line shown for a host-IPC run before it is tried in the sandbox
/// (compatibility C58).
inline constexpr std::string_view kHostIpcWarning =
    "Warning: this command will run on the host outside the OS sandbox.";

/// What the question names (compatibility C57): `command` for host-ipc (but a host socket's
/// `connect-unix`, docs/host-ipc.md "Host sockets"), else `resolvedPath`, else `path`, else
/// `destination`, else `operation`.
[[nodiscard]] std::string approval_target(const BoundaryRequest& request);

/// The longest command shown on a question's `Command:` line, in characters; a longer one is
/// cut there and ends in `…`.
inline constexpr std::size_t kQuestionCommandChars = 200;

/// `Unanswered, this is refused at <HH:MM:SS> (in <seconds> s).`: `at` in local time, `left`
/// rounded up to whole seconds; `<YYYY-MM-DD HH:MM:SS>` when `at` is on another day than
/// `at - left` (a deadline hours away, approval.questionTimeoutSeconds up to 86400).
[[nodiscard]] std::string deadline_line(std::chrono::seconds left,
                                        std::chrono::system_clock::time_point at);

/// The text of one question, ready for a terminal (docs/approvals.md, "The question and its
/// answers"):
///   `Sandbox approval required: <operation> <target>` "\n"
///   [`Command: <command>` "\n"]  (when the target is not the command itself; cut to
///                                 kQuestionCommandChars characters + `…`)
///   [`Runs: <resolvedPath>` "\n"]  (a host run's `execute-host` request with a resolvedPath:
///                                 the file its first word runs, hostipc::Invocation::program)
///   [<warning> "\n"] [<reason> "\n"]
///   [deadline_line() "\n"]  (when the question has a deadline; `now` and `wall_now` are the
///                           same instant on the broker's Clock and on the wall clock)
///   `  1) Deny` "\n" `  2) Allow this exact operation once` "\n"
///   [`  3) Allow <destination> for the rest of this command` "\n"
///    `  4) Allow <destination> for this session` "\n"]
/// Control characters in the request's text (and C1 controls) are shown as `\n`, `\xNN`
/// or `\u00NN`, so a command cannot drive the terminal.
[[nodiscard]] std::string question_text(
    const HumanQuestion& question,
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now(),
    std::chrono::system_clock::time_point wall_now = std::chrono::system_clock::now());

/// `Choice [1-<n>, Enter = Deny]: ` for a question of `n` choices.
[[nodiscard]] std::string choice_prompt(std::size_t n);

/// Asks on `/dev/tty`. One question at a time per process (a process-wide mutex). A
/// command's private pty relay lets go of the terminal first and holds the command's output
/// until the question is answered (core::TerminalLease), so the question stays readable. While
/// the answer is read the terminal is put in non-canonical mode without signals or echo, so
/// Ctrl-C arrives as the byte 0x03 and cancels the question instead of killing pi-sandbox, and
/// only the answer's printable characters are echoed (by the prompt); the settings are
/// restored afterwards. Answers: the number of a choice (question_choices());
/// Enter on an empty line or Esc → Deny; anything else asks again (at most 3 times, then
/// Deny). No `/dev/tty` (no controlling terminal), not the terminal's foreground process
/// group, EOF, Ctrl-C (0x03), Ctrl-D at the start of a line, or a read error → Unavailable
/// (kNoHumanReason); the deadline passing first → Unavailable with unanswered_reason().
class TerminalPrompt final : public HumanPrompt {
 public:
  /// `tty_path`: the terminal to open (tests may pass a pseudo-terminal's name).
  explicit TerminalPrompt(std::string tty_path = "/dev/tty");

  [[nodiscard]] HumanReply ask(const HumanQuestion& question) override;

  /// Ends the open question (the terminal shows `reason` and gets its settings back) and
  /// every later one; returns once the terminal is free.
  void end(std::string_view reason) override;

 private:
  std::string tty_path_;
  core::UniqueFd ended_;  ///< an eventfd, readable once end() was called
  std::mutex mutex_;
  std::string ended_reason_;
};

}  // namespace pisandbox::approval
