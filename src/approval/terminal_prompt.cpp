#include "approval/terminal_prompt.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <optional>

#include "core/deadline.hpp"
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

// Puts the terminal in non-canonical mode without signal characters or echo (read_answer()
// echoes what it keeps) and restores it.
class RawAnswerMode {
 public:
  explicit RawAnswerMode(int fd) : fd_(fd) {
    if (::tcgetattr(fd_, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ISIG | ECHO);
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

constexpr char kEscape = 0x1b;

// How reading an answer ended.
enum class Ended { Line, Escape, Cancelled, TimedOut, CommandEnded };

struct Answer {
  Ended ended = Ended::Cancelled;
  std::string line;
};

// Reads one answer line, echoing its printable characters, erasures and the end of the line
// (so that Enter, Esc and control keys never show as `^J`, `^[`). Cancelled: EOF, Ctrl-C,
// Ctrl-D on an empty line, an error. CommandEnded: `ended` became readable.
Answer read_answer(int fd, int ended,
                   const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  std::string line;
  for (;;) {
    pollfd ready[2] = {{fd, POLLIN, 0}, {ended, POLLIN, 0}};
    const int polled = ::poll(ready, 2, core::poll_timeout(deadline));
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0) return {Ended::TimedOut, {}};
    if (polled > 0 && ready[1].revents != 0) return {Ended::CommandEnded, {}};
    char c = 0;
    const ssize_t n = polled < 0 ? -1 : ::read(fd, &c, 1);
    if (n <= 0) return {};  // EOF, EINTR (a signal cancels), EIO (hangup)
    if (c == kCtrlC || (c == kCtrlD && line.empty())) return {};
    if (c == kEscape) return {Ended::Escape, {}};
    if (c == '\n' || c == '\r') {
      (void)write_all(fd, "\n");
      return {Ended::Line, line};
    }
    if (c == 0x7f || c == '\b') {
      if (!line.empty() && write_all(fd, "\b \b")) line.pop_back();
    } else if (c >= 0x20 && c < 0x7f && line.size() < kMaxAnswerBytes) {
      line += c;
      (void)write_all(fd, std::string_view(&c, 1));
    }
  }
}

std::string trimmed(std::string text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::timed_mutex& question_mutex() {
  static std::timed_mutex mutex;
  return mutex;
}

// `text` cut to `limit` characters (UTF-8 sequences kept whole) and `…`.
std::string cut(std::string text, std::size_t limit) {
  std::size_t characters = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) continue;
    if (++characters > limit) return text.substr(0, i) + "\xe2\x80\xa6";  // …
  }
  return text;
}

// The time left until `deadline`, in whole seconds rounded up.
std::chrono::seconds left_until(std::chrono::steady_clock::time_point deadline,
                                std::chrono::steady_clock::time_point now) {
  return std::max(std::chrono::seconds(0), std::chrono::ceil<std::chrono::seconds>(deadline - now));
}

}  // namespace

std::string approval_target(const BoundaryRequest& request) {
  // A host run names its command (the reference's order); a host socket, its path.
  if (request.surface == Surface::HostIpc && request.command && request.operation != "connect-unix")
    return *request.command;
  if (request.resolved_path) return *request.resolved_path;
  if (request.path) return *request.path;
  if (request.destination) return *request.destination;
  return request.operation;
}

std::string deadline_line(std::chrono::seconds left, std::chrono::system_clock::time_point at) {
  const std::time_t when = std::chrono::system_clock::to_time_t(at);
  std::tm local{};
  ::localtime_r(&when, &local);
  // A deadline on another day than today names the day too.
  const std::time_t now = std::chrono::system_clock::to_time_t(at - left);
  std::tm today{};
  ::localtime_r(&now, &today);
  const bool same_day = today.tm_yday == local.tm_yday && today.tm_year == local.tm_year;
  char clock[32];
  std::strftime(clock, sizeof clock, same_day ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S", &local);
  return "Unanswered, this is refused at " + std::string(clock) + " (in " +
         std::to_string(left.count()) + " s).";
}

std::string question_text(const HumanQuestion& question, std::chrono::steady_clock::time_point now,
                          std::chrono::system_clock::time_point wall_now) {
  const BoundaryRequest& request = question.request;
  const std::string target = approval_target(request);
  std::string text =
      "Sandbox approval required: " + printable(request.operation) + " " + printable(target) + "\n";
  if (request.command && *request.command != target)
    text += "Command: " + cut(printable(*request.command), kQuestionCommandChars) + "\n";
  // The file a host run starts, as its cleaned PATH finds it (hostipc::Invocation::program).
  if (request.surface == Surface::HostIpc && request.operation == "execute-host" &&
      request.resolved_path)
    text += "Runs: " + printable(*request.resolved_path) + "\n";
  if (!question.warning.empty()) text += printable(question.warning) + "\n";
  if (!question.reason.empty()) text += printable(question.reason) + "\n";
  if (question.deadline) {
    const auto left = left_until(*question.deadline, now);
    text += deadline_line(left, wall_now + left) + "\n";
  }
  const auto choices = question_choices(question);
  for (std::size_t i = 0; i < choices.size(); ++i)
    text += "  " + std::to_string(i + 1) + ") " + choices[i].label + "\n";
  return text;
}

std::string choice_prompt(std::size_t n) {
  return "Choice [1-" + std::to_string(n) + ", Enter = Deny]: ";
}

TerminalPrompt::TerminalPrompt(std::string tty_path)
    : tty_path_(std::move(tty_path)), ended_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void TerminalPrompt::end(std::string_view reason) {
  {
    std::lock_guard lock(mutex_);
    ended_reason_ = reason;
  }
  const std::uint64_t one = 1;
  if (ended_) (void)!::write(ended_.get(), &one, sizeof one);  // stays readable: never read
  // The open question, if any, ends now; waiting for the terminal is waiting for it.
  const std::lock_guard question(question_mutex());
}

HumanReply TerminalPrompt::ask(const HumanQuestion& question) {
  const auto asked = std::chrono::steady_clock::now();
  const auto unanswered = [&] {
    return HumanReply{HumanAnswer::Unavailable, std::nullopt,
                      unanswered_reason(left_until(*question.deadline, asked))};
  };
  const auto ended = [this] {
    std::lock_guard lock(mutex_);
    return HumanReply{HumanAnswer::Unavailable, std::nullopt, ended_reason_};
  };
  std::unique_lock lock(question_mutex(), std::defer_lock);
  if (!question.deadline)
    lock.lock();
  else if (!lock.try_lock_until(*question.deadline))
    return unanswered();  // another question had the terminal until the deadline
  pollfd over{ended_.get(), POLLIN, 0};
  if (ended_ && ::poll(&over, 1, 0) == 1) return ended();  // the command has ended
  // A command's private pty may be relaying this terminal: the relay stops reading it (and the
  // command's output), and puts its settings back, for as long as the question lasts.
  const core::TerminalLease::Borrowed borrowed(core::TerminalLease::controlling());
  UniqueFd tty(::open(tty_path_.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!tty) return {};
  // A background job reading the terminal would be stopped by SIGTTIN: do not ask then.
  if (::tcgetpgrp(tty.get()) != ::getpgrp()) return {};
  RawAnswerMode mode(tty.get());
  if (!write_all(tty.get(), "\n" + question_text(question))) return {};
  const auto choices = question_choices(question);
  for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
    if (!write_all(tty.get(), choice_prompt(choices.size()))) return {};
    const Answer answer = read_answer(tty.get(), ended_.get(), question.deadline);
    switch (answer.ended) {
      case Ended::Cancelled:
        (void)write_all(tty.get(), "\nCancelled.\n");
        return {};
      case Ended::TimedOut: {
        HumanReply reply = unanswered();
        (void)write_all(tty.get(), "\n" + reply.reason + "\n");
        return reply;
      }
      case Ended::Escape:
        (void)write_all(tty.get(), "\n");
        return {HumanAnswer::Deny, std::nullopt, {}};
      case Ended::CommandEnded: {
        HumanReply reply = ended();
        (void)write_all(tty.get(), "\n" + reply.reason + "\n");
        return reply;
      }
      case Ended::Line:
        break;
    }
    const std::string choice = trimmed(answer.line);
    if (choice.empty()) return {HumanAnswer::Deny, std::nullopt, {}};
    for (std::size_t i = 0; i < choices.size(); ++i)
      if (choice == std::to_string(i + 1)) return {choices[i].answer, std::nullopt, {}};
    if (!write_all(tty.get(),
                   "Please answer 1-" + std::to_string(choices.size()) + ", or Enter for Deny.\n"))
      return {};
  }
  return {HumanAnswer::Deny, std::nullopt, {}};
}

}  // namespace pisandbox::approval
