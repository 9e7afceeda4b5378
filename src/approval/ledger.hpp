// pisandbox::approval::ScopeLedger — what outlives one command's broker: the circuit breaker of
// each scope and the destinations the human allowed for the whole session.
//
// Source: docs/approvals.md, "The order of a decision" (Scopes: the breaker's state and the
// session answers are shared by every command with that `scope_key` in one `serve`); compatibility
// C71, C75 (the breaker). `run` keeps its ledger in the process (LocalLedger); a `serve` worker
// asks the serve process, which keeps one LocalLedger for all its commands (serve/worker_io.hpp).
#pragma once

#include <chrono>
#include <deque>
#include <expected>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "approval/circuit_breaker.hpp"
#include "approval/result.hpp"

namespace pisandbox::approval {

/// One automatic denial the user may override.
///   request_hash: request_hash() of the denied request (64 hex digits).
///   scope: the scope_key it was denied in.
///   recovery: what may override it. surface, target, reason: what the user is shown.
///   command: the request's command (empty when it has none), so that the user can tell
///     apart two denials of the same target (two commands reaching one destination).
struct RecentDenial {
  std::string request_hash;
  std::string scope;
  Recovery recovery = Recovery::Retry;
  std::string surface;
  std::string target;
  std::string reason;
  std::string command = {};
};

/// How long an override stays usable, and how long a critical denial stays open to
/// break-glass; how many non-critical denials are kept (docs/approvals.md, "After a wrong
/// denial").
inline constexpr std::chrono::seconds kOverrideTtl{60};
inline constexpr std::chrono::seconds kBreakGlassWindow{300};
inline constexpr std::size_t kRecentDenials = 10;

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

  /// Notes an automatic denial the user may override (LocalLedger::authorise()); a newer
  /// denial of the same request (request_hash) replaces the older one.
  virtual void note_denial(const RecentDenial& denial) = 0;

  /// Takes (uses up) the user's unexpired `kind` authorisation for the request with
  /// `request_hash`, asked for in `scope` (an authorisation bound to another scope does not
  /// count). Whether there was one.
  /// An implementation that cannot find out answers false (fail closed).
  [[nodiscard]] virtual bool take_override(std::string_view request_hash, std::string_view scope,
                                           Recovery kind) = 0;
};

/// The ledger kept in this process: a CircuitBreaker and a set of destinations under one
/// mutex. What `run` uses (its session is the run), and what the serve process keeps for all
/// its commands.
class LocalLedger final : public ScopeLedger {
 public:
  using Now = std::function<std::chrono::steady_clock::time_point()>;

  explicit LocalLedger(
      CircuitBreakerLimits limits = {}, Now now = [] { return std::chrono::steady_clock::now(); })
      : breaker_(limits), now_(std::move(now)) {}

  [[nodiscard]] bool tripped(std::string_view scope) override;
  void record(std::string_view scope, ReviewOutcome outcome) override;
  void clear(std::string_view scope) override;
  [[nodiscard]] bool allowed_for_session(std::string_view destination) override;
  void allow_for_session(std::string_view destination) override;
  void note_denial(const RecentDenial& denial) override;
  [[nodiscard]] bool take_override(std::string_view request_hash, std::string_view scope,
                                   Recovery kind) override;

  /// The denials the user may override now, newest first: the last kRecentDenials
  /// non-critical ones, and the critical ones of the last kBreakGlassWindow.
  [[nodiscard]] std::vector<RecentDenial> recent_denials();

  /// The user authorises `kind` for the newest recent denial with `request_hash`, usable once
  /// within kOverrideTtl, by a request of `scope` (empty: any scope of the session; a host
  /// names the scope its retry will run in, e.g. Pi's next turn). Errors (message only;
  /// docs/protocol.md, `override`):
  ///   `no recent automatic denial has request_hash <hash>`,
  ///   `the denial of <hash> was critical: only break-glass may override it`,
  ///   `the denial of <hash> was not critical: ask for a retry instead`,
  ///   `a retry of <hash> was already authorised in this session` (once per session and hash).
  [[nodiscard]] std::expected<RecentDenial, std::string> authorise(std::string_view request_hash,
                                                                   Recovery kind,
                                                                   std::string_view scope = {});

 private:
  struct Noted {
    RecentDenial denial;
    std::chrono::steady_clock::time_point at;
  };
  struct Authorised {
    std::string scope;
    Recovery kind;
    std::chrono::steady_clock::time_point expires;
  };
  void prune(std::chrono::steady_clock::time_point now);

  std::mutex mutex_;
  CircuitBreaker breaker_;
  Now now_;
  std::set<std::string, std::less<>> session_;
  std::deque<Noted> denials_;                                  // newest first
  std::map<std::string, Authorised, std::less<>> authorised_;  // by request hash
  std::set<std::string, std::less<>> retried_;                 // hashes given a retry
};

}  // namespace pisandbox::approval
