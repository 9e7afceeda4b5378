#include "session/record_check.hpp"

#include <unistd.h>

#include <cstdio>

#include "core/io.hpp"
#include "core/phase_trace.hpp"
#if !defined(__APPLE__)
#include "sandbox/linux/runner.hpp"
#endif

namespace pisandbox::session {

namespace {

std::string milliseconds(std::int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns) / 1e6);
  return text;
}

}  // namespace

std::shared_ptr<RecordCheck> RecordCheck::start(
    std::shared_ptr<sandbox::linux_::ReadyOffer> offer) {
  auto check = std::make_shared<RecordCheck>();
  RecordCheck* self = check.get();
  // The thread only reads the record and writes why_ and check_ns_, which the future's
  // answer publishes to whoever waits for it.
  self->answer_ = std::async(std::launch::async, [self, offer = std::move(offer)] {
    const std::int64_t begun = core::phases::now_ns();
    bool holds = false;
#if !defined(__APPLE__)  // made ahead on Linux only (session.cpp, prepare_ready())
    try {
      std::string why;
      holds = sandbox::linux_::host_unchanged(offer->record, &why);
      self->why_ = holds ? "holds (" + std::to_string(offer->record.reads.size()) + " reads)"
                         : std::move(why);
    } catch (...) {  // out of memory: not known to hold
      holds = false;
    }
#else
    (void)offer;
#endif
    self->check_ns_ = core::phases::now_ns() - begun;
    return holds;
  });
  return check;
}

RecordCheck::~RecordCheck() {
  if (answer_.valid()) answer_.wait();
}

bool RecordCheck::holds() {
  std::unique_lock lock(mutex_);
  if (answered_) return holds_;
  const std::int64_t waited = core::phases::now_ns();
  holds_ = answer_.get();
  answered_ = true;
  if (core::phases::trace().enabled)
    (void)core::write_all(
        STDERR_FILENO, "pi-sandbox: ready-record " + why_ + "\npi-sandbox: overlap record-check " +
                           milliseconds(check_ns_) + "\npi-sandbox: overlap gate-wait " +
                           milliseconds(core::phases::now_ns() - waited) + "\n");
  auto lines = std::move(lines_);
  lines_.clear();
  lock.unlock();
  if (holds_)
    for (const auto& [say, line] : lines) say(line);
  return holds_;
}

bool RecordCheck::stale() {
  std::lock_guard lock(mutex_);
  return answered_ && !holds_;
}

std::function<void(const std::string&)> RecordCheck::held(
    std::function<void(const std::string&)> say) {
  // Shared: the lines may be said from the proxy's threads after the command.
  return [self = shared_from_this(), say = std::move(say)](const std::string& line) {
    std::unique_lock lock(self->mutex_);
    if (!self->answered_) {
      self->lines_.emplace_back(say, line);
      return;
    }
    const bool tell = self->holds_;
    lock.unlock();
    if (tell) say(line);
  };
}

}  // namespace pisandbox::session
