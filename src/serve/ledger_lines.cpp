#include "serve/ledger_lines.hpp"

#include <array>
#include <nlohmann/json.hpp>

namespace pisandbox::serve {

namespace {

using nlohmann::json;
// Written in this key order: `type` first, which is what serve and the worker look for.
using Line = nlohmann::ordered_json;

constexpr std::array<std::pair<LedgerOp, std::string_view>, 7> kOps = {{
    {LedgerOp::Tripped, "tripped"},
    {LedgerOp::Record, "record"},
    {LedgerOp::Clear, "clear"},
    {LedgerOp::SessionAllowed, "session_allowed"},
    {LedgerOp::AllowSession, "allow_session"},
    {LedgerOp::NoteDenial, "note_denial"},
    {LedgerOp::TakeOverride, "take_override"},
}};

bool is_override_op(LedgerOp op) {
  return op == LedgerOp::NoteDenial || op == LedgerOp::TakeOverride;
}

std::string dump(const Line& value) {
  return value.dump(-1, ' ', false, Line::error_handler_t::replace) + "\n";
}

/// The object of `line` when its `type` is `type`, else a discarded value.
json object_of(std::string_view line, std::string_view type) {
  json value = json::parse(line, nullptr, false);
  if (!value.is_object() || value.value("type", "") != type) return json(json::value_t::discarded);
  return value;
}

}  // namespace

std::string ledger_request_line(const LedgerRequest& request) {
  std::string_view op;
  for (const auto& [each, name] : kOps)
    if (each == request.op) op = name;
  Line line = {{"type", "ledger"}, {"seq", request.seq}, {"op", op}};
  if (request.op == LedgerOp::SessionAllowed || request.op == LedgerOp::AllowSession) {
    line["destination"] = request.destination;
  } else {
    line["scope"] = request.scope;
    if (request.op == LedgerOp::Record) line["outcome"] = approval::to_string(request.outcome);
  }
  if (is_override_op(request.op)) {
    line["request_hash"] = request.request_hash;
    line["recovery"] = approval::to_string(request.recovery);
  }
  if (request.op == LedgerOp::NoteDenial) {
    line["surface"] = request.surface;
    line["target"] = request.target;
    line["reason"] = request.reason;
    line["command"] = request.command;
  }
  return dump(line);
}

bool is_ledger_request(std::string_view line) {
  return line.starts_with(R"({"type":"ledger",)");
}

std::optional<LedgerRequest> parse_ledger_request(std::string_view line) {
  const json value = object_of(line, "ledger");
  if (value.is_discarded() || !value.contains("seq") || !value["seq"].is_number_unsigned())
    return std::nullopt;
  LedgerRequest request;
  request.seq = value["seq"].get<std::uint64_t>();
  const std::string op = value.value("op", "");
  bool known = false;
  for (const auto& [each, name] : kOps)
    if (name == op) {
      request.op = each;
      known = true;
    }
  if (!known) return std::nullopt;
  request.scope = value.value("scope", "");
  request.destination = value.value("destination", "");
  if (request.op == LedgerOp::Record) {
    const auto outcome = approval::review_outcome_from_string(value.value("outcome", ""));
    if (!outcome) return std::nullopt;
    request.outcome = *outcome;
  }
  if (is_override_op(request.op)) {
    const auto recovery = approval::recovery_from_string(value.value("recovery", ""));
    request.request_hash = value.value("request_hash", "");
    if (!recovery || request.request_hash.empty()) return std::nullopt;
    request.recovery = *recovery;
    request.surface = value.value("surface", "");
    request.target = value.value("target", "");
    request.reason = value.value("reason", "");
    request.command = value.value("command", "");
  }
  return request;
}

std::string ledger_reply_line(std::uint64_t seq, bool value) {
  return dump({{"type", "ledger_reply"}, {"seq", seq}, {"value", value}});
}

std::optional<LedgerReply> parse_ledger_reply(std::string_view line) {
  if (!line.starts_with(R"({"type":"ledger_reply",)")) return std::nullopt;
  const json value = object_of(line, "ledger_reply");
  if (value.is_discarded() || !value.contains("seq") || !value["seq"].is_number_unsigned() ||
      !value.contains("value") || !value["value"].is_boolean())
    return std::nullopt;
  return LedgerReply{value["seq"].get<std::uint64_t>(), value["value"].get<bool>()};
}

std::string settle_line(std::string_view request_id) {
  return dump({{"type", "settle"}, {"request_id", request_id}});
}

std::optional<std::string> parse_settle(std::string_view line) {
  if (!line.starts_with(R"({"type":"settle",)")) return std::nullopt;
  const json value = object_of(line, "settle");
  if (value.is_discarded() || !value.contains("request_id") || !value["request_id"].is_string())
    return std::nullopt;
  return value["request_id"].get<std::string>();
}

}  // namespace pisandbox::serve
