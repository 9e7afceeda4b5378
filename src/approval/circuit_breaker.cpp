#include "approval/circuit_breaker.hpp"

namespace pisandbox::approval {

CircuitBreaker::CircuitBreaker(CircuitBreakerLimits limits) : limits_(limits) {}

void CircuitBreaker::record(std::string_view scope, ReviewOutcome outcome) {
  auto it = scopes_.find(scope);
  if (it == scopes_.end()) it = scopes_.emplace(std::string(scope), ScopeState{}).first;
  ScopeState& state = it->second;
  const bool denial = outcome == ReviewOutcome::Deny;
  remember(state, denial);
  state.consecutive_denials = denial ? state.consecutive_denials + 1 : 0;
  if (state.consecutive_denials >= limits_.consecutive_denials ||
      state.denials_in_window >= limits_.denials_in_window) {
    state.tripped = true;
  }
}

void CircuitBreaker::remember(ScopeState& state, bool denial) const {
  state.recent.push_back(denial);
  if (denial) ++state.denials_in_window;
  while (state.recent.size() > limits_.window) {
    if (state.recent.front()) --state.denials_in_window;
    state.recent.pop_front();
  }
}

bool CircuitBreaker::tripped(std::string_view scope) const {
  const auto it = scopes_.find(scope);
  return it != scopes_.end() && it->second.tripped;
}

void CircuitBreaker::clear(std::string_view scope) {
  if (const auto it = scopes_.find(scope); it != scopes_.end()) scopes_.erase(it);
}

void CircuitBreaker::clear() {
  scopes_.clear();
}

}  // namespace pisandbox::approval
