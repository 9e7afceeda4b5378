#include "sandbox/linux/terminal.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "core/io.hpp"
#include "core/terminal_lease.hpp"

namespace pisandbox::sandbox::linux_ {

using core::UniqueFd;

TerminalPlan plan_terminal(const TerminalFacts& facts) {
  TerminalPlan plan;
  if (!facts.stdout_terminal) return plan;
  if (facts.stdin_terminal && !facts.foreground) return plan;
  plan.private_pty = true;
  plan.relay_input = facts.stdin_terminal;
  plan.slave = {facts.stdin_terminal, true, facts.stderr_terminal};
  return plan;
}

TerminalFacts terminal_facts(const RunOptions& options) {
  TerminalFacts facts;
  facts.stdin_terminal = options.stdin_fd < 0 && ::isatty(STDIN_FILENO) == 1;
  facts.stdout_terminal = options.output == nullptr && ::isatty(STDOUT_FILENO) == 1;
  facts.stderr_terminal = options.output == nullptr && ::isatty(STDERR_FILENO) == 1;
  facts.foreground = facts.stdin_terminal && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  return facts;
}

PtySetup pty_setup(const TerminalPlan& plan) {
  PtySetup setup;
  setup.slave = plan.slave;
  const int from = plan.relay_input ? STDIN_FILENO : STDOUT_FILENO;
  if (::tcgetattr(from, &setup.settings) == 0) setup.has_settings = true;
  (void)::ioctl(STDOUT_FILENO, TIOCGWINSZ, &setup.size);
  return setup;
}

core::Result<PtyPair> open_private_pty(const PtySetup& setup) {
  PtyPair pair;
  pair.master.reset(::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!pair.master) return core::fail_errno("open(\"/dev/ptmx\")");
  int unlock = 0;
  if (::ioctl(pair.master.get(), TIOCSPTLCK, &unlock) != 0)
    return core::fail_errno("ioctl(/dev/ptmx, TIOCSPTLCK)");
  pair.slave.reset(::ioctl(pair.master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
  if (!pair.slave) return core::fail_errno("ioctl(/dev/ptmx, TIOCGPTPEER)");
  if (setup.has_settings && ::tcsetattr(pair.slave.get(), TCSANOW, &setup.settings) != 0)
    return core::fail_errno("tcsetattr(the private pty)");
  if (::ioctl(pair.slave.get(), TIOCSWINSZ, &setup.size) != 0)
    return core::fail_errno("ioctl(the private pty, TIOCSWINSZ)");
  return pair;
}

core::Result<void> take_controlling_terminal(int slave) {
  if (::setsid() < 0) return core::fail_errno("setsid()");
  if (::ioctl(slave, TIOCSCTTY, 0) != 0) return core::fail_errno("ioctl(TIOCSCTTY)");
  return {};
}

namespace {

/// Forks the watchdog: in a session of its own (so a signal to pi-sandbox's process group
/// does not reach it), it waits for end of file on a pipe whose other end only pi-sandbox
/// holds. A byte first means "restored"; end of file alone means pi-sandbox died without
/// restoring (SIGKILL), and the watchdog puts `saved` back on stdin's terminal. Only
/// async-signal-safe calls after fork(): the supervisor may have threads (the proxy).
/// Returns its pid and the write end in `done`, or -1 when it could not be started.
pid_t start_watchdog(const termios& saved, UniqueFd& done) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    (void)::setsid();
    // Keep stdin (the terminal) and the read end as fd 3; close everything else, including
    // this process's copy of the write end.
    if (ends[0] != 3) ::dup2(ends[0], 3);
    ::syscall(SYS_close_range, 4U, ~0U, 0U);
    char byte = 0;
    ssize_t n;
    while ((n = ::read(3, &byte, 1)) < 0 && errno == EINTR) {
    }
    if (n == 0) (void)::tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    ::_exit(0);
  }
  ::close(ends[0]);
  if (pid < 0) {
    ::close(ends[1]);
    return -1;
  }
  done.reset(ends[1]);
  return pid;
}

}  // namespace

core::Result<void> TerminalRelay::start(const TerminalPlan& plan, UniqueFd master) {
  (void)::fcntl(master.get(), F_SETFL, ::fcntl(master.get(), F_GETFL) | O_NONBLOCK);
  master_ = std::move(master);
  sigset_t winch;
  sigemptyset(&winch);
  sigaddset(&winch, SIGWINCH);
  winch_.reset(::signalfd(-1, &winch, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!winch_) return core::fail_errno("signalfd(SIGWINCH)");
  resize();  // the window may have changed since pid 1 copied its size
  if (plan.relay_input) {
    if (::tcgetattr(STDIN_FILENO, &saved_) != 0) return core::fail_errno("tcgetattr(stdin)");
    // The watchdog first, so that no moment has raw mode without it.
    watchdog_ = start_watchdog(saved_, watchdog_done_);
    if (auto r = set_raw(true); !r) return r;
    input_ = true;
  }
  // Held with or without input: a question for the user also stops the command's output.
  lease_fd_ = core::TerminalLease::controlling().hold();
  return {};
}

TerminalRelay::~TerminalRelay() {
  restore();
}

void TerminalRelay::fill(std::span<pollfd, kPollFds> fds) const {
  // While a question has the terminal the master is not read: the command's writes wait in
  // the pty (and then block), so nothing draws over the question (docs/security.md, "The
  // terminal").
  const short events = static_cast<short>((lent_ ? 0 : POLLIN) | (pending_.empty() ? 0 : POLLOUT));
  const bool watched = master_.valid() && !hung_up_ && events != 0;
  fds[0] = {watched ? master_.get() : -1, events, 0};
  fds[1] = {input_ && !lent_ && pending_.empty() ? STDIN_FILENO : -1, POLLIN, 0};
  fds[2] = {winch_.get(), POLLIN, 0};
  fds[3] = {lease_fd_, POLLIN, 0};
}

void TerminalRelay::handle(std::span<const pollfd, kPollFds> fds) {
  if (fds[0].fd >= 0 && (fds[0].revents & POLLOUT) != 0) flush_input();
  if (fds[0].fd >= 0 && !lent_ && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
    relay_output(16);
  if (fds[1].fd >= 0 && fds[1].revents != 0) relay_input();
  if (fds[2].fd >= 0 && fds[2].revents != 0) resize();
  if (fds[3].fd >= 0 && fds[3].revents != 0) on_lease();
}

void TerminalRelay::drain() {
  // Every process of the sandbox is gone, so every slave is closed: what is left in the
  // master comes out, then EIO. The bound only guards against a kernel that keeps it open.
  while (master_.valid() && !hung_up_) {
    pollfd pfd{master_.get(), POLLIN, 0};
    if (::poll(&pfd, 1, 2000) == 0) break;
    relay_output(16);
  }
}

void TerminalRelay::restore() {
  // The settings go back before the lease is released: a question waiting for the terminal
  // must find (and later restore) the caller's own settings, not raw mode.
  if (raw_) (void)set_raw(false);
  if (lease_fd_ >= 0) core::TerminalLease::controlling().release();
  lease_fd_ = -1;
  input_ = false;
  if (watchdog_ > 0) {
    (void)!::write(watchdog_done_.get(), "r", 1);
    watchdog_done_.reset();
    while (::waitpid(watchdog_, nullptr, 0) < 0 && errno == EINTR) {
    }
    watchdog_ = -1;
  }
}

void TerminalRelay::relay_output(int rounds) {
  char buffer[65536];
  for (int round = 0; round < rounds; ++round) {
    const ssize_t n = ::read(master_.get(), buffer, sizeof buffer);
    if (n > 0) {
      (void)core::write_all(STDOUT_FILENO, std::string_view(buffer, static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    hung_up_ = true;  // EIO: no slave is open any more (pty(7))
    input_ = false;
    pending_.clear();
    return;
  }
}

void TerminalRelay::relay_input() {
  char buffer[4096];
  const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    input_ = false;  // the caller's terminal hung up
    return;
  }
  pending_.append(buffer, static_cast<std::size_t>(n));
  flush_input();
}

void TerminalRelay::flush_input() {
  while (!pending_.empty()) {
    const ssize_t n = ::write(master_.get(), pending_.data(), pending_.size());
    if (n > 0) {
      pending_.erase(0, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;  // the command reads slowly: POLLOUT resumes
    pending_.clear();
    input_ = false;
    return;
  }
}

void TerminalRelay::resize() {
  signalfd_siginfo info;
  while (::read(winch_.get(), &info, sizeof info) == sizeof info) {
  }
  // TIOCSWINSZ on the master sets the slave's size and sends SIGWINCH to its foreground
  // process group (tty_ioctl(4)).
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0)
    (void)::ioctl(master_.get(), TIOCSWINSZ, &size);
}

void TerminalRelay::on_lease() {
  auto& lease = core::TerminalLease::controlling();
  const bool wanted = lease.wanted();
  if (wanted && !lent_) {
    // A question for the user: stop reading the terminal and the command's output, and give
    // the terminal its own settings.
    raw_before_lent_ = raw_;
    if (raw_) (void)set_raw(false);
    lent_ = true;
    lease.lent(true);
  } else if (!wanted && lent_) {
    if (raw_before_lent_) (void)set_raw(true);
    lent_ = false;
    lease.lent(false);
  }
}

core::Result<void> TerminalRelay::set_raw(bool raw) {
  termios settings = saved_;
  if (raw) ::cfmakeraw(&settings);
  if (::tcsetattr(STDIN_FILENO, TCSADRAIN, &settings) != 0)
    return core::fail_errno(raw ? "tcsetattr(stdin, raw)" : "tcsetattr(stdin)");
  raw_ = raw;
  return {};
}

BlockedSignal::BlockedSignal(int signal) {
  if (signal == 0) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signal);
  active_ = ::pthread_sigmask(SIG_BLOCK, &set, &previous_) == 0;
}

BlockedSignal::~BlockedSignal() {
  if (active_) ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

}  // namespace pisandbox::sandbox::linux_
