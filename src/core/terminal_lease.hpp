// pisandbox::core::TerminalLease — who reads the caller's terminal: the relay of a command's
// private pseudo-terminal, or a question to the user (docs/security.md, "The terminal").
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "core/unique_fd.hpp"

namespace pisandbox::core {

/// The process's controlling terminal, shared between one holder (the pty relay, which reads
/// it in raw mode on the supervisor's thread) and borrowers (the terminal prompt, on a proxy
/// worker thread). A borrower waits until the holder has stopped reading the terminal and
/// put its settings back; the holder takes the terminal back once every borrower has given
/// it back. Without a holder, borrowing returns at once. Thread-safe.
class TerminalLease {
 public:
  /// The lease of this process's one controlling terminal (/dev/tty).
  static TerminalLease& controlling() {
    static TerminalLease lease;
    return lease;
  }

  // ---- the holder ----

  /// Starts holding the terminal. Returns a descriptor (an eventfd, or -1 when none could be
  /// made) that becomes readable whenever a borrower arrives or leaves; then call wanted().
  int hold() {
    const std::lock_guard lock(mutex_);
    held_ = true;
    lent_ = false;
    return wake_.get();
  }

  /// Stops holding the terminal (the relay has ended): waiting borrowers go on.
  void release() {
    const std::lock_guard lock(mutex_);
    held_ = false;
    cv_.notify_all();
  }

  /// Clears the wake-up and says whether a borrower wants the terminal now.
  bool wanted() {
    std::uint64_t count = 0;
    if (wake_) (void)!::read(wake_.get(), &count, sizeof count);
    const std::lock_guard lock(mutex_);
    return borrowers_ > 0;
  }

  /// The holder has stopped (`true`) or resumed (`false`) reading the terminal.
  void lent(bool yes) {
    const std::lock_guard lock(mutex_);
    lent_ = yes;
    cv_.notify_all();
  }

  // ---- a borrower ----

  /// The terminal for one question: waits until the holder, if any, has let go of it; gives
  /// it back when destroyed.
  class Borrowed {
   public:
    explicit Borrowed(TerminalLease& lease) : lease_(lease) { lease_.borrow(); }
    ~Borrowed() { lease_.give_back(); }
    Borrowed(const Borrowed&) = delete;
    Borrowed& operator=(const Borrowed&) = delete;

   private:
    TerminalLease& lease_;
  };

 private:
  TerminalLease() : wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

  void wake() {
    const std::uint64_t one = 1;
    if (wake_) (void)!::write(wake_.get(), &one, sizeof one);
  }

  void borrow() {
    std::unique_lock lock(mutex_);
    ++borrowers_;
    if (held_) wake();
    cv_.wait(lock, [this] { return !held_ || lent_ || !wake_; });
  }

  void give_back() {
    const std::lock_guard lock(mutex_);
    --borrowers_;
    if (held_) wake();
  }

  UniqueFd wake_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool held_ = false;
  bool lent_ = false;
  int borrowers_ = 0;
};

}  // namespace pisandbox::core
