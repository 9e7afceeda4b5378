#include "approval/ledger.hpp"

#include <algorithm>

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

void LocalLedger::prune(std::chrono::steady_clock::time_point now) {
  std::size_t retries = 0;
  std::erase_if(denials_, [&](const Noted& noted) {
    if (noted.denial.recovery == Recovery::BreakGlass) return now - noted.at > kBreakGlassWindow;
    return ++retries > kRecentDenials;
  });
  std::erase_if(authorised_, [&](const auto& entry) { return entry.second.expires <= now; });
}

void LocalLedger::note_denial(const RecentDenial& denial) {
  std::lock_guard lock(mutex_);
  const auto now = now_();
  // One entry per request: a command the agent repeats must not push the others out.
  std::erase_if(denials_, [&](const Noted& noted) {
    return noted.denial.request_hash == denial.request_hash;
  });
  denials_.push_front(Noted{denial, now});
  prune(now);
}

std::vector<RecentDenial> LocalLedger::recent_denials() {
  std::lock_guard lock(mutex_);
  prune(now_());
  std::vector<RecentDenial> out;
  for (const Noted& noted : denials_) out.push_back(noted.denial);
  return out;
}

std::expected<RecentDenial, std::string> LocalLedger::authorise(std::string_view request_hash,
                                                                Recovery kind,
                                                                std::string_view scope) {
  std::lock_guard lock(mutex_);
  const auto now = now_();
  prune(now);
  const std::string hash(request_hash);
  const auto found = std::ranges::find_if(
      denials_, [&](const Noted& noted) { return noted.denial.request_hash == request_hash; });
  if (found == denials_.end())
    return std::unexpected("no recent automatic denial has request_hash " + hash);
  const RecentDenial& denial = found->denial;
  if (denial.recovery != kind)
    return std::unexpected(
        kind == Recovery::Retry
            ? "the denial of " + hash + " was critical: only break-glass may override it"
            : "the denial of " + hash + " was not critical: ask for a retry instead");
  if (kind == Recovery::Retry && !retried_.insert(hash).second)
    return std::unexpected("a retry of " + hash + " was already authorised in this session");
  authorised_[hash] = Authorised{std::string(scope), kind, now + kOverrideTtl};
  return denial;
}

bool LocalLedger::take_override(std::string_view request_hash, std::string_view scope,
                                Recovery kind) {
  std::lock_guard lock(mutex_);
  prune(now_());
  const auto it = authorised_.find(request_hash);
  if (it == authorised_.end() || it->second.kind != kind) return false;
  if (!it->second.scope.empty() && it->second.scope != scope) return false;
  authorised_.erase(it);
  return true;
}

}  // namespace pisandbox::approval
