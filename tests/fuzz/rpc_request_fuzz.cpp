// libFuzzer target: any bytes as a serve request stream. The splitter and the parser must
// never crash; an accepted exec must round-trip through exec_line(); an accepted
// approval_response keeps its source and reason rules.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rpc/protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  pisandbox::rpc::LineSplitter splitter;
  std::vector<std::string> lines;
  splitter.feed(bytes, lines);
  lines.push_back(splitter.take_rest());
  for (const auto& line : lines) {
    auto request = pisandbox::rpc::parse_request(line);
    if (!request) continue;
    if (auto* exec = std::get_if<pisandbox::rpc::Exec>(&*request)) {
      const std::string again = pisandbox::rpc::exec_line(*exec);
      auto reparsed =
          pisandbox::rpc::parse_request(std::string_view(again).substr(0, again.size() - 1));
      if (!reparsed || !std::holds_alternative<pisandbox::rpc::Exec>(*reparsed)) std::abort();
    }
    // An accepted answer never allows for a source other than a person or a reviewer, and
    // its reason stays within bounds (docs/protocol.md, `approval_response`).
    if (auto* response = std::get_if<pisandbox::rpc::ApprovalResponse>(&*request)) {
      if (response->choice != pisandbox::rpc::Choice::Deny && response->source &&
          *response->source != "human" && *response->source != "reviewer")
        std::abort();
      if (response->reason && response->reason->size() > pisandbox::rpc::kMaxReasonBytes)
        std::abort();
    }
  }
  (void)pisandbox::rpc::output_event("x", false, bytes);
  (void)pisandbox::rpc::incomplete_utf8_tail(bytes);
  if (auto decoded = pisandbox::rpc::base64_decode(bytes))
    (void)pisandbox::rpc::base64_encode(*decoded);
  return 0;
}
