// pisandbox::core — poll(2) timeouts from an optional deadline.
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>

namespace pisandbox::core {

/// The longest timeout a command may be given, in seconds (about 31.7 years): `run
/// --timeout` and serve's `timeout_s` refuse more, and say this number.
inline constexpr double kMaxTimeoutSeconds = 1'000'000'000;
/// kMaxTimeoutSeconds as the messages print it.
inline constexpr const char* kMaxTimeoutText = "1000000000";

/// The poll(2) timeout, in milliseconds, that wakes at `deadline`: -1 (wait forever) without
/// one, 0 once it has passed, else the time left rounded up (so 0 means passed), at most
/// 2^30 ms.
[[nodiscard]] inline int poll_timeout(
    const std::optional<std::chrono::steady_clock::time_point>& deadline) {
  if (!deadline) return -1;
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
}

}  // namespace pisandbox::core
