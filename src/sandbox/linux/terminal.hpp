// pisandbox::sandbox::linux_ — a private pseudo-terminal for a command run from a terminal:
// the plan (pure), the pty made inside the sandbox (pid 1's side) and the relay between the
// caller's terminal and the pty's master (the supervisor's side). docs/security.md, "The
// terminal"; pty(7), tty_ioctl(4), credentials(7) for sessions and job control.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include <array>
#include <span>
#include <string>

#include "core/error.hpp"
#include "core/unique_fd.hpp"
#include "sandbox/command.hpp"

namespace pisandbox::sandbox::linux_ {

/// What launch() knows about the descriptors the command would inherit from the caller.
struct TerminalFacts {
  bool stdin_terminal = false;   ///< the command's stdin is the caller's fd 0, a terminal
  bool stdout_terminal = false;  ///< the command's stdout is the caller's fd 1, a terminal
  bool stderr_terminal = false;  ///< the command's stderr is the caller's fd 2, a terminal
  /// pi-sandbox's process group is the foreground group of fd 0's terminal (tcgetpgrp(3)).
  bool foreground = false;
  friend bool operator==(const TerminalFacts&, const TerminalFacts&) = default;
};

/// Whether the command gets a private pty and how it is wired.
///   private_pty: the sandbox makes a pty; its slave is the command's controlling terminal.
///   relay_input: the caller's stdin is read (in raw mode) and written to the pty's master.
///   slave:       which of the command's stdin, stdout, stderr (in that order) are the slave;
///                the others stay the caller's own descriptors.
struct TerminalPlan {
  bool private_pty = false;
  bool relay_input = false;
  std::array<bool, 3> slave{};
  friend bool operator==(const TerminalPlan&, const TerminalPlan&) = default;
};

/// The plan for `facts`. A pty only when the command's stdout is a terminal (an interactive
/// command; `pi-sandbox run ... | less` keeps today's descriptors, so the terminal's mode is
/// never touched under another program), and, when stdin is a terminal too, only when
/// pi-sandbox is its foreground job (a background job keeps today's descriptors rather than
/// being stopped by SIGTTOU when it sets raw mode). Every standard descriptor that is a
/// terminal becomes the slave; input is relayed (and the caller's terminal put in raw mode)
/// only when stdin is one of them. Pipes and files are never replaced.
[[nodiscard]] TerminalPlan plan_terminal(const TerminalFacts& facts);

/// The facts for `options`: stdin counts only when options.stdin_fd is -1, stdout and
/// stderr only when options.output is null (otherwise they are pipes to a sink: `serve`).
[[nodiscard]] TerminalFacts terminal_facts(const RunOptions& options);

/// What pid 1 needs to make the pty: the plan's wiring plus the caller terminal's settings
/// and window size, copied to the slave before the command runs.
struct PtySetup {
  std::array<bool, 3> slave{};
  bool has_settings = false;  ///< tcgetattr(3) of the caller's terminal succeeded
  termios settings{};
  winsize size{};  ///< rows and columns (characters), as TIOCGWINSZ gave them
};

/// The setup for `plan` from the caller's terminal (fd 0 when input is relayed, else fd 1).
[[nodiscard]] PtySetup pty_setup(const TerminalPlan& plan);

/// A new pty of the sandbox's own devpts instance: master and slave, close-on-exec.
struct PtyPair {
  core::UniqueFd master;
  core::UniqueFd slave;
};

/// In pid 1, after the mount plan: opens /dev/ptmx (the sandbox's devpts, so `tty` inside
/// prints a /dev/pts/N that exists inside), unlocks it, opens the slave from the master
/// (TIOCGPTPEER, so no path is looked up) and gives it `setup`'s settings and size.
/// Errors: `open("/dev/ptmx")`, `ioctl(TIOCSPTLCK)`, `ioctl(TIOCGPTPEER)`, `tcsetattr()`.
[[nodiscard]] core::Result<PtyPair> open_private_pty(const PtySetup& setup);

/// In the command's process: a new session (setsid(2)) whose controlling terminal is `slave`
/// (TIOCSCTTY, tty_ioctl(4)); the new process group is the terminal's foreground group.
/// Errors: `setsid()`, `ioctl(TIOCSCTTY)`.
[[nodiscard]] core::Result<void> take_controlling_terminal(int slave);

/// The supervisor's side: relays the caller's stdin to the master and the master's output
/// to the caller's stdout, passes window-size changes on (SIGWINCH → TIOCSWINSZ), and holds
/// the caller's terminal in raw mode while input is relayed, so that Ctrl-C, Ctrl-Z and the
/// like reach the command through its pty (the line discipline of the slave turns them into
/// signals for the command's foreground process group, not for pi-sandbox). The terminal's
/// settings are restored exactly by restore() or the destructor; if pi-sandbox is killed
/// with SIGKILL, a watchdog process (in a session of its own) restores them. While a
/// question for the user needs the terminal (core::TerminalLease), neither input nor the
/// command's output is relayed (the command's writes wait in the pty, then block) and the
/// caller's settings are back, so the question stays readable (docs/security.md, "The
/// terminal"). SIGWINCH must be
/// blocked in every thread before start() (launch() blocks it before the clone, so the proxy's
/// threads inherit the mask).
class TerminalRelay {
 public:
  /// How many pollfd entries fill() writes.
  static constexpr std::size_t kPollFds = 4;

  TerminalRelay() = default;
  TerminalRelay(const TerminalRelay&) = delete;
  TerminalRelay& operator=(const TerminalRelay&) = delete;
  ~TerminalRelay();

  /// Starts relaying for `plan` over `master` (made non-blocking here); with
  /// plan.relay_input, starts the watchdog and puts the caller's terminal in raw mode
  /// (cfmakeraw(3)). Errors: `signalfd(SIGWINCH)`, `tcgetattr(stdin)`, `tcsetattr(stdin,
  /// raw)`.
  [[nodiscard]] core::Result<void> start(const TerminalPlan& plan, core::UniqueFd master);

  /// Whether start() has been given a master.
  [[nodiscard]] bool active() const { return master_.valid(); }

  /// The descriptors to poll now: the master, the caller's stdin, SIGWINCH's signalfd and
  /// the lease's wake-up (an entry not to poll has fd -1).
  void fill(std::span<pollfd, kPollFds> fds) const;

  /// Handles what poll(2) reported for the entries fill() wrote.
  void handle(std::span<const pollfd, kPollFds> fds);

  /// After the sandbox is gone (every slave closed): copies what is left in the master to
  /// the caller's stdout until EIO (at most 2 s without any output).
  void drain();

  /// Puts the caller's terminal back exactly as it was (tcsetattr(3) with the settings
  /// tcgetattr(3) gave before raw mode), stops the watchdog and releases the lease.
  /// Idempotent.
  void restore();

 private:
  void relay_output(int rounds);
  void relay_input();
  void flush_input();
  void resize();
  void on_lease();
  core::Result<void> set_raw(bool raw);

  core::UniqueFd master_;
  core::UniqueFd winch_;          ///< signalfd for SIGWINCH
  int lease_fd_ = -1;             ///< TerminalLease::controlling()'s wake-up, while held
  bool hung_up_ = false;          ///< the master said EIO: no slave is open any more
  bool input_ = false;            ///< stdin is still read
  bool raw_ = false;              ///< the caller's terminal is in raw mode now
  bool lent_ = false;             ///< a question has the terminal (input and output wait)
  bool raw_before_lent_ = false;  ///< raw mode to put back when the question is done
  termios saved_{};               ///< the caller's settings before raw mode
  std::string pending_;           ///< input not yet written to the master
  pid_t watchdog_ = -1;           ///< the watchdog's pid, or -1
  core::UniqueFd watchdog_done_;  ///< written to (then closed) when restored normally
};

/// Blocks one signal in the calling thread for its lifetime (restoring the previous mask),
/// so that threads started meanwhile inherit the block and a signalfd receives it.
class BlockedSignal {
 public:
  BlockedSignal() = default;
  explicit BlockedSignal(int signal);
  ~BlockedSignal();
  BlockedSignal(const BlockedSignal&) = delete;
  BlockedSignal& operator=(const BlockedSignal&) = delete;

 private:
  bool active_ = false;
  sigset_t previous_{};
};

}  // namespace pisandbox::sandbox::linux_
