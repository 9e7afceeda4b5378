// pisandbox::session — the record's check of a sandbox made ahead, made alongside the command's
// hand-over (docs/security.md, "A sandbox made ahead").
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace pisandbox::sandbox::linux_ {
struct ReadyOffer;
}

namespace pisandbox::session {

/// The comparison of a sandbox made ahead's record of the host
/// (sandbox::linux_::host_unchanged()) on a thread of its own, started at the command's request
/// and made while the session is set up and the command is handed over to the sandbox's pid 1;
/// the command's process waits before its execve(2) until the answer is known
/// (sandbox::RunOptions::gate). Lines said meanwhile (held()) wait for it too: told when the
/// record holds, dropped when it does not, since the command then runs again the full way,
/// which says its own. Nothing is compared less than before: only earlier.
class RecordCheck : public std::enable_shared_from_this<RecordCheck> {
 public:
  /// Starts comparing `offer`'s record; `offer` is kept alive until the answer. Only the
  /// record is read on the thread (the caller may move the offer's other members meanwhile).
  static std::shared_ptr<RecordCheck> start(std::shared_ptr<sandbox::linux_::ReadyOffer> offer);

  RecordCheck() = default;
  RecordCheck(const RecordCheck&) = delete;
  RecordCheck& operator=(const RecordCheck&) = delete;
  ~RecordCheck();

  /// Waits for the answer (the first call; later ones return it at once): true when every
  /// recorded path and content is as recorded; then the held lines are told, else dropped.
  /// With PI_SANDBOX_TRACE_PHASES=1 says on stderr `pi-sandbox: ready-record <why>`, then
  /// `pi-sandbox: overlap record-check <ms>` (the comparison's time on its thread) and
  /// `pi-sandbox: overlap gate-wait <ms>` (what the caller waited for it).
  bool holds();

  /// Whether holds() has answered that the record does not hold.
  bool stale();

  /// `say`, except that its lines wait for holds() (told in their order once it answers
  /// true, never when it answers false); after the answer they pass at once.
  std::function<void(const std::string&)> held(std::function<void(const std::string&)> say);

 private:
  std::future<bool> answer_;
  std::string why_;            ///< written by the thread before its answer
  std::int64_t check_ns_ = 0;  ///< likewise: the comparison's time
  std::mutex mutex_;           ///< guards what follows
  bool answered_ = false;
  bool holds_ = false;
  std::vector<std::pair<std::function<void(const std::string&)>, std::string>> lines_;
};

}  // namespace pisandbox::session
