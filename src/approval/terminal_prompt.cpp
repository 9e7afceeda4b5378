#include "approval/terminal_prompt.hpp"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <optional>

#include "core/io.hpp"
#include "core/printable.hpp"
#include "core/terminal_lease.hpp"
#include "core/unique_fd.hpp"

namespace pisandbox::approval {

namespace {

using core::UniqueFd;

constexpr char kCtrlC = 0x03;
constexpr char kCtrlD = 0x04;
constexpr std::size_t kMaxAnswerBytes = 64;
constexpr int kMaxAttempts = 3;

using core::printable;
using core::write_all;

// Puts the terminal in non-canonical mode without signal characters and restores it.
class RawAnswerMode {
 public:
  explicit RawAnswerMode(int fd) : fd_(fd) {
    if (::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ISIG);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(fd_, TCSAFLUSH, &raw) == 0;
  }
  ~RawAnswerMode() {
    if (active_) ::tcsetattr(fd_, TCSAFLUSH, &saved_);
  }
  RawAnswerMode(const RawAnswerMode&) = delete;
  RawAnswerMode& operator=(const RawAnswerMode&) = delete;

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

// Reads one answer line. nullopt = cancelled (EOF, Ctrl-C, Ctrl-D on an empty line, error).
std::optional<std::string> read_answer(int fd) {
  std::string line;
  for (;;) {
    char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n <= 0) return std::nullopt;  // EOF, EINTR (a signal cancels), EIO (hangup)
    if (c == kCtrlC || (c == kCtrlD && line.empty())) return std::nullopt;
    if (c == '\n' || c == '\r') return line;
    if (c == 0x7f || c == '\b') {
      if (!line.empty()) line.pop_back();
    } else if (line.size() < kMaxAnswerBytes) {
      line += c;
    }
  }
}

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::mutex& question_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

std::string approval_target(const BoundaryRequest& request) {
  if (request.surface == Surface::HostIpc && request.command) return *request.command;
  if (request.resolved_path) return *request.resolved_path;
  if (request.path) return *request.path;
  if (request.destination) return *request.destination;
  return request.operation;
}

std::string question_text(const HumanQuestion& question) {
  std::string text = "Sandbox approval required: " + printable(question.request.operation) + " " +
                     printable(approval_target(question.request)) + "\n";
  if (!question.warning.empty()) text += printable(question.warning) + "\n";
  if (!question.reason.empty()) text += printable(question.reason) + "\n";
  text += "  1) Allow this exact operation once\n  2) Deny\n";
  if (question.offer_for_command && question.request.destination)
    text += "  3) Allow " + printable(*question.request.destination) +
            " for the rest of this command\n";
  return text;
}

TerminalPrompt::TerminalPrompt(std::string tty_path) : tty_path_(std::move(tty_path)) {}

HumanAnswer TerminalPrompt::ask(const HumanQuestion& question) {
  std::lock_guard lock(question_mutex());
  // A command's private pty may be relaying this terminal in raw mode: the relay stops
  // reading it and puts its settings back for as long as the question lasts.
  const core::TerminalLease::Borrowed borrowed(core::TerminalLease::controlling());
  UniqueFd tty(::open(tty_path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!tty) return HumanAnswer::Unavailable;
  // A background job reading the terminal would be stopped by SIGTTIN: do not ask then.
  if (::tcgetpgrp(tty.get()) != ::getpgrp()) return HumanAnswer::Unavailable;
  RawAnswerMode mode(tty.get());
  if (!write_all(tty.get(), "\n" + question_text(question))) return HumanAnswer::Unavailable;
  const bool three = question.offer_for_command && question.request.destination;
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (!write_all(tty.get(), three ? "Choice [1/2/3]: " : "Choice [1/2]: "))
      return HumanAnswer::Unavailable;
    auto answer = read_answer(tty.get());
    if (!answer) {
      (void)write_all(tty.get(), "\nCancelled.\n");
      return HumanAnswer::Unavailable;
    }
    const std::string choice = trimmed(*answer);
    if (choice == "1") return HumanAnswer::AllowOnce;
    if (choice == "2") return HumanAnswer::Deny;
    if (choice == "3" && three) return HumanAnswer::AllowForCommand;
    if (!write_all(tty.get(), three ? "Please answer 1, 2 or 3.\n" : "Please answer 1 or 2.\n"))
      return HumanAnswer::Unavailable;
  }
  return HumanAnswer::Deny;
}

}  // namespace pisandbox::approval
