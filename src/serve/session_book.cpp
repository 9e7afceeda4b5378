#include "serve/session_book.hpp"

#include <nlohmann/json.hpp>

#include "serve/ledger_lines.hpp"

namespace pisandbox::serve {

void SessionBook::answer(const std::string& id, std::string_view line) {
  const auto request = parse_ledger_request(line);
  if (!request) return;
  bool value = true;
  switch (request->op) {
    case LedgerOp::Tripped:
      value = ledger_.tripped(request->scope);
      break;
    case LedgerOp::Record:
      ledger_.record(request->scope, request->outcome);
      break;
    case LedgerOp::Clear:
      ledger_.clear(request->scope);
      break;
    case LedgerOp::SessionAllowed:
      value = ledger_.allowed_for_session(request->destination);
      break;
    case LedgerOp::AllowSession:
      ledger_.allow_for_session(request->destination);
      settle(request->destination);
      break;
    case LedgerOp::NoteDenial:
      ledger_.note_denial({request->request_hash, request->scope, request->recovery,
                           request->surface, request->target, request->reason, request->command});
      break;
    case LedgerOp::TakeOverride:
      value = ledger_.take_override(request->request_hash, request->scope, request->recovery);
      break;
  }
  send_(id, ledger_reply_line(request->seq, value));
}

void SessionBook::opened(const std::string& id, std::string_view line) {
  const auto event = nlohmann::json::parse(line, nullptr, false);
  if (!event.is_object() || !event.contains("request") || !event["request"].is_object()) return;
  const auto& request = event["request"];
  if (request.value("surface", "") != "network" || !request.contains("destination")) return;
  const std::string destination = request.value("destination", "");
  open_[id][event.value("request_id", "")] = destination;
  // Another command's answer crossed this question on its way.
  if (ledger_.allowed_for_session(destination)) settle(destination);
}

void SessionBook::settled(const std::string& id, std::string_view line) {
  const auto event = nlohmann::json::parse(line, nullptr, false);
  if (event.is_object()) answered(id, event.value("request_id", ""));
}

void SessionBook::answered(const std::string& id, const std::string& request_id) {
  if (const auto it = open_.find(id); it != open_.end()) it->second.erase(request_id);
}

std::vector<std::string> SessionBook::ended(const std::string& id) {
  std::vector<std::string> still_open;
  if (const auto it = open_.find(id); it != open_.end()) {
    for (const auto& [request_id, destination] : it->second) still_open.push_back(request_id);
    open_.erase(it);
  }
  return still_open;
}

void SessionBook::settle(const std::string& destination) {
  for (auto& [id, questions] : open_) {
    for (auto it = questions.begin(); it != questions.end();) {
      if (it->second != destination) {
        ++it;
        continue;
      }
      send_(id, settle_line(it->first));
      it = questions.erase(it);
    }
  }
}

}  // namespace pisandbox::serve
