// pisandbox::session — the record's check of a sandbox made ahead, made alongside the command's
// hand-over (docs/security.md, "A sandbox made ahead").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace pisandbox::sandbox::linux_ {
struct ReadyOffer;
}

namespace pisandbox::session {

/// The comparison of a sandbox made ahead's record of the host
/// (sandbox::linux_::host_unchanged()), made while the session is set up and the command is
/// handed over to the sandbox's pid 1; the command's process waits before its execve(2) until
/// the answer is known (sandbox::RunOptions::gate). A thread of its own, made with the sandbox
/// and waiting, is given it at the command's request (begin()); when the caller needs the
/// answer before that thread has taken it (a busy machine, where the thread gets no
/// processor), the caller makes it itself. Lines said
/// meanwhile (held()) wait for it too: told when the record holds, dropped when it does not,
/// since the command then runs again the full way, which says its own. Nothing is compared
/// less than before: only earlier.
class RecordCheck : public std::enable_shared_from_this<RecordCheck> {
 public:
  /// Makes the thread that will compare `offer`'s record once begin() is called; the caller
  /// keeps `offer` alive until the answer (gone before, the record is taken not to hold). Only
  /// the record is read on the thread (the caller may move the offer's other members
  /// meanwhile). Made before the command's request, so that the
  /// request does not wait for a thread to be made.
  static std::shared_ptr<RecordCheck> prepare(std::shared_ptr<sandbox::linux_::ReadyOffer> offer);

  /// The command's request has come: the thread may compare now (the comparison is of the
  /// host as the request finds it or later, never earlier).
  void begin();

  /// What holds() asks when the record does not hold: true when the policy and the plans,
  /// computed again, are those the sandbox and the session were made from (docs/security.md,
  /// "A sandbox made ahead", the second way). Called on the caller's thread, once.
  void set_second_way(std::function<bool()> second_way);

  RecordCheck() = default;
  RecordCheck(const RecordCheck&) = delete;
  RecordCheck& operator=(const RecordCheck&) = delete;
  /// Never waits: a thread still running is left to end on its own.
  ~RecordCheck();

  /// The answer (made here when the thread has not taken the comparison yet, else waited
  /// for; later calls return it at once): true when every recorded path and content is as
  /// recorded, or else the second way says the plans hold; then the held lines are told, else
  /// dropped. With PI_SANDBOX_TRACE_PHASES=1
  /// says on stderr `pi-sandbox: ready-record <why>`, then `pi-sandbox: overlap record-check
  /// <ms>` (the comparison's time, on whichever thread made it) and `pi-sandbox: overlap
  /// gate-wait <ms>` (what the caller waited for the answer, its own comparison included).
  bool holds();

  /// Waits until the thread has ended: before a clone(2) of the process (the full way after a
  /// stale answer), which must find no other thread inside the allocator.
  void join();

  /// `say`, except that its lines wait for holds() (told in their order once it answers
  /// true, never when it answers false); after the answer they pass at once.
  std::function<void(const std::string&)> held(std::function<void(const std::string&)> say);

 private:
  /// What the thread and the caller share; the thread's copy keeps it alive.
  struct Shared {
    /// Not owned: a sandbox made ahead that goes unused is stopped and its cgroup removed when
    /// its owner lets it go (ReadyAhead), never kept by a thread that waits.
    std::weak_ptr<sandbox::linux_::ReadyOffer> offer;
    std::atomic<bool> taken{false};  ///< the comparison was taken, by the thread or the caller
    std::mutex mutex;
    std::condition_variable done;
    bool begun = false;  ///< begin() was called: the thread may compare
    std::condition_variable wake;
    bool computed = false;
    bool holds = false;
    std::string why;
    std::int64_t check_ns = 0;
  };
  /// Makes the comparison into `shared` unless it was taken already.
  static void compare(Shared& shared);

  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  std::function<bool()> second_way_;
  std::mutex mutex_;  ///< guards what follows
  bool answered_ = false;
  bool holds_ = false;
  std::vector<std::pair<std::function<void(const std::string&)>, std::string>> lines_;
};

}  // namespace pisandbox::session
