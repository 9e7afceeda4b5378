// libFuzzer target: untrusted bytes into the approval core's parsers — the reviewer's
// stdout, a host's BoundaryRequest JSON, and a shell command read by the hard-deny rules.
// Must never crash, hang or trip a sanitizer; round trips must hold.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "approval/audit.hpp"
#include "approval/boundary_request.hpp"
#include "approval/hard_deny.hpp"
#include "approval/reviewer_output.hpp"

namespace {

using namespace pisandbox::approval;

void require(bool condition) {
  if (!condition) std::abort();
}

const HardDenyOptions& options() {
  static const HardDenyOptions o{{"/home/u/.pi/agent/logs", "~/.config/pi-sandbox"}, "/home/u"};
  return o;
}

void fuzz_reviewer_output(std::string_view text) {
  const auto verdict = parse_reviewer_output(text);
  if (verdict) require(!verdict->rationale.empty());
}

void fuzz_request(std::string_view text) {
  const auto request = parse_boundary_request(text);
  if (!request) return;
  require(validate(*request).has_value());
  const auto again = from_json(to_json(*request));
  require(again.has_value() && *again == *request);
  const auto hash = request_hash(*request);
  require(hash.has_value() && hash->size() == 64 && *hash == request_hash(*again).value());
  (void)find_hard_deny(*request, options());
  const std::string line =
      audit_line(AuditEvent::ReviewDecision, *request, AuditDetails{Action::Deny, "reviewer", "r"},
                 std::chrono::system_clock::time_point{});
  require(line.find('\n') == line.size() - 1);
}

void fuzz_command(std::string_view text) {
  BoundaryRequest request;
  request.id = "fuzz";
  request.source = "sandbox-runtime";
  request.surface = Surface::HostIpc;
  request.operation = "execute-host";
  request.cwd = "/home/u/ws";
  request.command = std::string(text);
  if (const auto deny = find_hard_deny(request, options())) require(!deny->reason.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fuzz_reviewer_output(text);
  fuzz_request(text);
  fuzz_command(text);
  return 0;
}
