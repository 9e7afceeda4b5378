#include "approval/audit.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "approval/json_text.hpp"

namespace pisandbox::approval {
namespace {

using nlohmann::ordered_json;

// Names what the request reaches: the destination for network requests, the command for
// host runs, the path for filesystem requests.
void add_target(ordered_json& line, const BoundaryRequest& request) {
  if (request.destination) {
    line["destination"] = *request.destination;
  } else if (request.command) {
    line["command"] = *request.command;
  } else if (const auto& path = request.resolved_path ? request.resolved_path : request.path) {
    line["path"] = *path;
  }
}

}  // namespace

std::string_view to_string(AuditEvent event) {
  switch (event) {
    case AuditEvent::ReviewDecision:
      return "review_decision";
    case AuditEvent::HardDeny:
      return "hard_deny";
    case AuditEvent::GrantIssued:
      return "grant_issued";
    case AuditEvent::GrantConsumed:
      return "grant_consumed";
    case AuditEvent::GrantRejected:
      return "grant_rejected";
  }
  return "review_decision";
}

AuditDetails details_of(const ApprovalResult& result) {
  return AuditDetails{result.action, std::string(to_string(result.source)), result.reason};
}

std::string rfc3339_utc(std::chrono::system_clock::time_point wall_time) {
  using namespace std::chrono;
  const auto millis = floor<milliseconds>(wall_time);
  const auto day = floor<days>(millis);
  const year_month_day date{day};
  const hh_mm_ss time{millis - day};
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<int>(time.subseconds().count()));
  return text;
}

std::string audit_line(AuditEvent event, const BoundaryRequest& request,
                       const AuditDetails& details,
                       std::chrono::system_clock::time_point wall_time) {
  ordered_json line;
  line["time"] = rfc3339_utc(wall_time);
  line["event"] = to_string(event);
  const auto hash = request_hash(request);
  line["request_hash"] = hash ? *hash : std::string();
  line["surface"] = to_string(request.surface);
  add_target(line, request);
  if (details.action) line["action"] = to_string(*details.action);
  if (!details.source.empty()) line["source"] = details.source;
  if (!details.reason.empty()) line["reason"] = details.reason;
  // The command that asked and the path are named even when they are not the target, so that
  // every line says who reached what (docs/approvals.md, "The audit log"); last, so that the fields
  // before them keep their places.
  if (request.command && !line.contains("command")) line["command"] = *request.command;
  if (const auto& path = request.resolved_path ? request.resolved_path : request.path;
      path && !line.contains("path"))
    line["path"] = *path;
  return line.dump(-1, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace pisandbox::approval
