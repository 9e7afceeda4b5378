// pisandbox::approval::ScopeLedger — what outlives one command's broker: the circuit breaker of
// each scope and the destinations the human allowed for the whole session.
//
// Source: docs/approvals.md, "The order of a decision" (Scopes: the breaker's state and the
// session answers are shared by every command with that `scope_key` in one `serve`); compatibility
// C71, C75 (the breaker). `run` keeps its ledger in the process (LocalLedger); a `serve` worker
// asks the serve process, which keeps one LocalLedger for all its commands (serve/worker_io.hpp).
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "approval/circuit_breaker.hpp"
#include "approval/result.hpp"

namespace pisandbox::approval {

/// The shared state of the decisions of one session. Thread-safe: called from the proxy's
/// decision threads at once. A call may block briefly (a round trip to the serve process).
class ScopeLedger {
 public:
  virtual ~ScopeLedger() = default;

  /// Whether the circuit breaker of `scope` has tripped (and not been cleared). An
  /// implementation that cannot find out answers true (fail closed).
  [[nodiscard]] virtual bool tripped(std::string_view scope) = 0;

  /// Records one decision in the breaker of `scope` (CircuitBreaker::record()).
  virtual void record(std::string_view scope, ReviewOutcome outcome) = 0;

  /// Forgets the breaker of `scope` (e.g. when a turn ends).
  virtual void clear(std::string_view scope) = 0;

  /// Whether the human allowed `destination` (`host:port`) for this session.
  [[nodiscard]] virtual bool allowed_for_session(std::string_view destination) = 0;

  /// Remembers that the human allowed `destination` (`host:port`) for this session: later
  /// requests for it, from any command of the session, pass without a question.
  virtual void allow_for_session(std::string_view destination) = 0;
};

/// The ledger kept in this process: a CircuitBreaker and a set of destinations under one
/// mutex. What `run` uses (its session is the run), and what the serve process keeps for all
/// its commands.
class LocalLedger final : public ScopeLedger {
 public:
  explicit LocalLedger(CircuitBreakerLimits limits = {}) : breaker_(limits) {}

  [[nodiscard]] bool tripped(std::string_view scope) override;
  void record(std::string_view scope, ReviewOutcome outcome) override;
  void clear(std::string_view scope) override;
  [[nodiscard]] bool allowed_for_session(std::string_view destination) override;
  void allow_for_session(std::string_view destination) override;

 private:
  std::mutex mutex_;
  CircuitBreaker breaker_;
  std::set<std::string, std::less<>> session_;
};

}  // namespace pisandbox::approval
