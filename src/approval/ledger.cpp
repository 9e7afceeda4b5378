#include "approval/ledger.hpp"

namespace pisandbox::approval {

bool LocalLedger::tripped(std::string_view scope) {
  std::lock_guard lock(mutex_);
  return breaker_.tripped(scope);
}

void LocalLedger::record(std::string_view scope, ReviewOutcome outcome) {
  std::lock_guard lock(mutex_);
  breaker_.record(scope, outcome);
}

void LocalLedger::clear(std::string_view scope) {
  std::lock_guard lock(mutex_);
  breaker_.clear(scope);
}

bool LocalLedger::allowed_for_session(std::string_view destination) {
  std::lock_guard lock(mutex_);
  return session_.contains(destination);
}

void LocalLedger::allow_for_session(std::string_view destination) {
  std::lock_guard lock(mutex_);
  session_.emplace(destination);
}

}  // namespace pisandbox::approval
