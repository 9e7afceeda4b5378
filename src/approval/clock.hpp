// pisandbox::approval::Clock — the time source of grants, injected so tests can advance it.
#pragma once

#include <chrono>

namespace pisandbox::approval {

/// A monotonic time source. Grants expire on this clock (compatibility C74), so a test
/// can replace it with a clock it advances by hand.
class Clock {
 public:
  virtual ~Clock() = default;
  /// The current instant on a monotonic clock (never goes backwards).
  [[nodiscard]] virtual std::chrono::steady_clock::time_point now() const = 0;
};

/// The real clock: std::chrono::steady_clock.
class SteadyClock final : public Clock {
 public:
  [[nodiscard]] std::chrono::steady_clock::time_point now() const override {
    return std::chrono::steady_clock::now();
  }
};

}  // namespace pisandbox::approval
