// pisandbox::approval::TerminalPrompt — asks the human on the controlling terminal.
//
// Source: docs/compatibility.md, "Approvals" and compatibility C57 (title, target, options)
// and C58 (the host-IPC warning lines).
#pragma once

#include <string>
#include <string_view>

#include "approval/boundary_request.hpp"
#include "approval/broker.hpp"

namespace pisandbox::approval {

/// The warning line shown for a host-IPC run before it is tried in the sandbox
/// (compatibility C58).
inline constexpr std::string_view kHostIpcWarning =
    "Warning: this command will run on the host outside the OS sandbox.";

/// What the question names (compatibility C57): `command` for host-ipc, else
/// `resolvedPath`, else `path`, else `destination`, else `operation`.
[[nodiscard]] std::string approval_target(const BoundaryRequest& request);

/// The text of one question, ready for a terminal:
///   `Sandbox approval required: <operation> <target>` "\n"
///   [<warning> "\n"] [<reason> "\n"]
///   `  1) Allow this exact operation once` "\n" `  2) Deny` "\n"
/// Control characters in the request's text (and C1 controls) are shown as `\n`, `\xNN`
/// or `\u00NN`, so a command cannot drive the terminal.
[[nodiscard]] std::string question_text(const HumanQuestion& question);

/// Asks on `/dev/tty`. One question at a time per process (a process-wide mutex). A
/// command's private pty relay lets go of the terminal first (core::TerminalLease). While
/// the answer is read the terminal is put in non-canonical mode without signals, so Ctrl-C
/// arrives as the byte 0x03 and cancels the question instead of killing pi-sandbox; the
/// settings are restored afterwards. Answers: `1` → AllowOnce, `2` → Deny; anything else
/// asks again (at most 3 times, then Deny). No `/dev/tty` (no controlling terminal), not
/// the terminal's foreground process group, EOF, Ctrl-C (0x03), Ctrl-D at the start of a
/// line, or a read error → Unavailable.
class TerminalPrompt final : public HumanPrompt {
 public:
  /// `tty_path`: the terminal to open (tests may pass a pseudo-terminal's name).
  explicit TerminalPrompt(std::string tty_path = "/dev/tty");

  [[nodiscard]] HumanAnswer ask(const HumanQuestion& question) override;

 private:
  std::string tty_path_;
};

}  // namespace pisandbox::approval
