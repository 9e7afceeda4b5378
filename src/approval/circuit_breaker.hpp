// pisandbox::approval::CircuitBreaker — stops automatic review after repeated denials.
//
// Source: compatibility C71 (hard denies count as denials; a tripped breaker denies
// before the reviewer runs) and C75 (thresholds, per scope key, cleared only by clear()).
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <string_view>

#include "approval/result.hpp"

namespace pisandbox::approval {

/// The reason of a deny from a tripped breaker (compatibility C71).
inline constexpr std::string_view kCircuitBreakerReason =
    "Automatic review stopped after repeated denials in this turn.";

/// When a scope trips (compatibility C75): `consecutive_denials` denials in a row, or
/// `denials_in_window` denials among the last `window` recorded decisions.
struct CircuitBreakerLimits {
  std::size_t consecutive_denials = 3;
  std::size_t denials_in_window = 10;
  std::size_t window = 50;
};

/// Counts review outcomes per scope key (for `run`: one scope per invocation; for hosts:
/// the key they pass, e.g. `<session>:turn:<n>`). Once a scope trips it stays tripped until
/// clear(). Not thread-safe: the owner serialises calls.
class CircuitBreaker {
 public:
  explicit CircuitBreaker(CircuitBreakerLimits limits = {});

  /// Records one decision in `scope`. Only ReviewOutcome::Deny counts as a denial;
  /// Allow and Defer end the consecutive run but still take a place in the window.
  void record(std::string_view scope, ReviewOutcome outcome);

  /// True once `scope` has reached either limit (and until clear()).
  [[nodiscard]] bool tripped(std::string_view scope) const;

  /// Forgets one scope (e.g. when its turn ends).
  void clear(std::string_view scope);

  /// Forgets every scope (session start or shutdown).
  void clear();

 private:
  struct ScopeState {
    std::deque<bool> recent;  // true = denial; at most limits_.window entries
    std::size_t denials_in_window = 0;
    std::size_t consecutive_denials = 0;
    bool tripped = false;
  };

  void remember(ScopeState& state, bool denial) const;

  CircuitBreakerLimits limits_;
  std::map<std::string, ScopeState, std::less<>> scopes_;
};

}  // namespace pisandbox::approval
