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

void RecordCheck::compare(Shared& shared) {
  if (shared.taken.exchange(true)) return;
  const std::int64_t begun = core::phases::now_ns();
  bool holds = false;
  std::string why;
#if !defined(__APPLE__)  // made ahead on Linux only (session.cpp, prepare_ready())
  try {
    if (const auto offer = shared.offer.lock()) {
      holds = sandbox::linux_::host_unchanged(offer->record, &why);
      if (holds) why = "holds (" + std::to_string(offer->record.reads.size()) + " reads)";
    } else {
      why = "the sandbox made ahead is gone";
    }
  } catch (...) {  // out of memory: not known to hold
    holds = false;
  }
#endif
  const std::lock_guard lock(shared.mutex);
  shared.holds = holds;
  shared.why = std::move(why);
  shared.check_ns = core::phases::now_ns() - begun;
  shared.computed = true;
  shared.done.notify_all();
}

std::shared_ptr<RecordCheck> RecordCheck::prepare(
    std::shared_ptr<sandbox::linux_::ReadyOffer> offer) {
  auto check = std::make_shared<RecordCheck>();
  check->shared_ = std::make_shared<Shared>();
  check->shared_->offer = std::move(offer);
  try {
    check->thread_ = std::thread([shared = check->shared_] {
      {
        std::unique_lock lock(shared->mutex);
        shared->wake.wait(lock, [&] { return shared->begun; });
      }
      compare(*shared);
    });
  } catch (const std::system_error&) {  // no thread: holds() compares
  }
  return check;
}

void RecordCheck::set_second_way(std::function<bool()> second_way) {
  second_way_ = std::move(second_way);
}

void RecordCheck::begin() {
  const std::lock_guard lock(shared_->mutex);
  shared_->begun = true;
  shared_->wake.notify_one();
}

RecordCheck::~RecordCheck() {
  if (thread_.joinable()) thread_.detach();
}

void RecordCheck::join() {
  begin();  // a thread still waiting ends too
  if (thread_.joinable()) thread_.join();
}

bool RecordCheck::holds() {
  std::unique_lock lock(mutex_);
  if (answered_) return holds_;
  const std::int64_t waited = core::phases::now_ns();
  compare(*shared_);
  {
    std::unique_lock done(shared_->mutex);
    shared_->done.wait(done, [&] { return shared_->computed; });
    holds_ = shared_->holds;
  }
  std::string why = shared_->why;
  if (!holds_ && second_way_) {
    try {
      holds_ = second_way_();
    } catch (...) {  // not known to hold: the command runs the full way
      holds_ = false;
    }
    why += holds_ ? "; the plans computed again hold" : "; the plans computed again differ";
  }
  answered_ = true;
  if (core::phases::trace().enabled)
    (void)core::write_all(
        STDERR_FILENO, "pi-sandbox: ready-record " + why + "\npi-sandbox: overlap record-check " +
                           milliseconds(shared_->check_ns) + "\npi-sandbox: overlap gate-wait " +
                           milliseconds(core::phases::now_ns() - waited) + "\n");
  auto lines = std::move(lines_);
  lines_.clear();
  lock.unlock();
  if (holds_)
    for (const auto& [say, line] : lines) say(line);
  return holds_;
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
