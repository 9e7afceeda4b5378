#include "serve/remote_ledger.hpp"

namespace pisandbox::serve {

std::optional<bool> RemoteLedger::call(LedgerRequest request) {
  reader_.start();
  std::unique_lock lock(mutex_);
  request.seq = next_seq_++;
  const std::uint64_t seq = request.seq;
  // Written without the lock: the reader thread takes replies under it meanwhile.
  lock.unlock();
  pipe_.write(ledger_request_line(request));
  lock.lock();
  replied_.wait(lock, [&] { return replies_.contains(seq) || closed_; });
  const auto it = replies_.find(seq);
  if (it == replies_.end()) return std::nullopt;
  const bool value = it->second;
  replies_.erase(it);
  return value;
}

bool RemoteLedger::tripped(std::string_view scope) {
  return call({0, LedgerOp::Tripped, std::string(scope), {}, {}}).value_or(true);
}

void RemoteLedger::record(std::string_view scope, approval::ReviewOutcome outcome) {
  (void)call({0, LedgerOp::Record, std::string(scope), outcome, {}});
}

void RemoteLedger::clear(std::string_view scope) {
  (void)call({0, LedgerOp::Clear, std::string(scope), {}, {}});
}

bool RemoteLedger::allowed_for_session(std::string_view destination) {
  return call({0, LedgerOp::SessionAllowed, {}, {}, std::string(destination)}).value_or(false);
}

void RemoteLedger::allow_for_session(std::string_view destination) {
  (void)call({0, LedgerOp::AllowSession, {}, {}, std::string(destination)});
}

void RemoteLedger::note_denial(const approval::RecentDenial& denial) {
  LedgerRequest request{0, LedgerOp::NoteDenial, denial.scope, {}, {}};
  request.request_hash = denial.request_hash;
  request.recovery = denial.recovery;
  request.surface = denial.surface;
  request.target = denial.target;
  request.reason = denial.reason;
  request.command = denial.command;
  (void)call(std::move(request));
}

bool RemoteLedger::take_override(std::string_view request_hash, std::string_view scope,
                                 approval::Recovery kind) {
  LedgerRequest request{0, LedgerOp::TakeOverride, std::string(scope), {}, {}};
  request.request_hash = request_hash;
  request.recovery = kind;
  return call(std::move(request)).value_or(false);
}

bool RemoteLedger::take(const std::string& line) {
  const auto reply = parse_ledger_reply(line);
  if (!reply) return false;
  std::lock_guard lock(mutex_);
  replies_[reply->seq] = reply->value;
  replied_.notify_all();
  return true;
}

void RemoteLedger::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  replied_.notify_all();
}

}  // namespace pisandbox::serve
