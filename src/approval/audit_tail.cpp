#include "approval/audit_tail.hpp"

#include <nlohmann/json.hpp>

#include "core/printable.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::string text_of(const json& entry, std::string_view key) {
  const auto it = entry.find(key);
  return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `text` cut to at most `bytes` bytes on a UTF-8 boundary, with `…` when something was cut.
std::string cut(std::string text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t end = bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text + "\u2026";
}

AuditDecision decision_of(const json& entry, std::string event) {
  AuditDecision d;
  d.time = text_of(entry, "time");
  d.action = text_of(entry, "action");
  d.source = text_of(entry, "source");
  d.surface = text_of(entry, "surface");
  d.destination = text_of(entry, "destination");
  d.path = text_of(entry, "path");
  d.command = text_of(entry, "command");
  d.reason = text_of(entry, "reason");
  d.request_hash = text_of(entry, "request_hash");
  d.events.push_back(std::move(event));
  return d;
}

}  // namespace

std::vector<AuditDecision> AuditGrouper::take_complete() {
  std::vector<AuditDecision> out;
  while (!queue_.empty() && queue_.front().complete) {
    out.push_back(std::move(queue_.front().decision));
    queue_.pop_front();
  }
  return out;
}

std::vector<AuditDecision> AuditGrouper::add_line(std::string_view line) {
  if (line.empty()) return {};
  const json entry = json::parse(line, nullptr, false);
  const auto event_it = entry.is_object() ? entry.find("event") : entry.end();
  if (!entry.is_object() || event_it == entry.end() || !event_it->is_string()) {
    AuditDecision unreadable;
    unreadable.unreadable = std::string(line);
    queue_.push_back(Open{std::move(unreadable), true, next_serial_++});
    return take_complete();
  }
  const std::string event = event_it->get<std::string>();
  const std::string hash = text_of(entry, "request_hash");
  // The open allow of this hash, if any.
  Open* open = nullptr;
  if (const auto found = open_allow_.find(hash); found != open_allow_.end()) {
    for (Open& candidate : queue_)
      if (candidate.serial == found->second) open = &candidate;
  }
  const auto close_open = [&] {
    if (open == nullptr) return;
    open->complete = true;
    open_allow_.erase(hash);
  };

  if (event == "grant_issued" || event == "grant_consumed") {
    if (open != nullptr) {
      open->decision.events.push_back(event);
      if (event == "grant_consumed") close_open();
    }
    return take_complete();
  }
  if (event == "grant_rejected") {
    AuditDecision rejected = decision_of(entry, event);
    rejected.action = "deny";
    rejected.source = "invalid-grant";
    if (open != nullptr) {
      // The allow did not happen: the decision shown is the rejection, at the allow's place.
      AuditDecision& d = open->decision;
      d.events.push_back(event);
      d.action = "deny";
      d.source = "invalid-grant";
      d.reason = rejected.reason;
      close_open();
    } else {
      queue_.push_back(Open{std::move(rejected), true, next_serial_++});
    }
    return take_complete();
  }
  if (!entry.contains("action")) return take_complete();  // an event this reader does not know

  // A new decision. An allow still open for the same hash got no grant line: it is over.
  close_open();
  AuditDecision decision = decision_of(entry, event);
  const bool allow = decision.action == "allow";
  const unsigned long long serial = next_serial_++;
  if (allow) open_allow_[hash] = serial;
  queue_.push_back(Open{std::move(decision), !allow, serial});
  return take_complete();
}

std::vector<AuditDecision> AuditGrouper::flush() {
  std::vector<AuditDecision> out;
  for (Open& open : queue_) out.push_back(std::move(open.decision));
  queue_.clear();
  open_allow_.clear();
  return out;
}

bool matches(const AuditDecision& decision, const AuditFilter& filter) {
  if (decision.unreadable) return filter.surface.empty() && filter.action.empty();
  if (!filter.surface.empty() && decision.surface != filter.surface) return false;
  if (!filter.action.empty() && decision.action != filter.action) return false;
  return true;
}

std::string source_in_words(std::string_view source) {
  if (source == "human") return "by the user";
  if (source == "reviewer") return "by the reviewer";
  if (source == "hard-deny") return "hard deny";
  if (source == "unavailable") return "nobody could be asked";
  if (source == "invalid-grant") return "invalid grant";
  return "by " + std::string(source);
}

std::string readable_line(const AuditDecision& d) {
  if (d.unreadable) return "(unreadable audit line) " + core::printable(cut(*d.unreadable, 200));
  const std::string& target = !d.destination.empty() ? d.destination
                              : !d.path.empty()      ? d.path
                                                     : d.command;
  std::string out =
      core::printable(d.time) + " " + core::printable(d.action) + " " + core::printable(d.surface) +
      " " + core::printable(&target == &d.command ? cut(target, kTailCommandBytes) : target);
  if (!d.command.empty() && &target != &d.command)
    out += " (" + core::printable(cut(d.command, kTailCommandBytes)) + ")";
  // A hard deny's reason names itself (`Hard deny (<rule>): <what>.`): said once.
  constexpr std::string_view kHardDeny = "Hard deny (";
  if (d.source == "hard-deny" && d.reason.starts_with(kHardDeny))
    return out + " hard deny " + core::printable(d.reason.substr(kHardDeny.size() - 1));
  out += " " + core::printable(source_in_words(d.source));
  if (!d.reason.empty()) out += ": " + core::printable(d.reason);
  return out;
}

std::string json_line(const AuditDecision& d) {
  ordered_json out;
  if (d.unreadable) {
    out["unreadable"] = *d.unreadable;
  } else {
    out["time"] = d.time;
    out["action"] = d.action;
    out["source"] = d.source;
    out["surface"] = d.surface;
    for (const auto& [key, value] :
         {std::pair{"destination", &d.destination}, std::pair{"path", &d.path},
          std::pair{"command", &d.command}, std::pair{"reason", &d.reason}})
      if (!value->empty()) out[key] = *value;
    out["request_hash"] = d.request_hash;
    out["events"] = d.events;
  }
  return out.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

}  // namespace pisandbox::approval
