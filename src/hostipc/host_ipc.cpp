#include "hostipc/host_ipc.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace pisandbox::hostipc {

namespace {

constexpr std::string_view kWhitespace = " \t\n\v\f\r";

bool is_space(char c) {
  return kWhitespace.find(c) != std::string_view::npos;
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kWhitespace) - first + 1);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// Keeps the last kMaxStderrTailBytes of stderr while passing every byte on.
class StderrTail final : public sandbox::OutputSink {
 public:
  explicit StderrTail(sandbox::OutputSink& next) : next_(next) {}
  void write(sandbox::Stream stream, std::string_view bytes) override {
    if (stream == sandbox::Stream::Stderr) {
      tail_.append(bytes);
      if (tail_.size() > kMaxStderrTailBytes) tail_.erase(0, tail_.size() - kMaxStderrTailBytes);
    }
    next_.write(stream, bytes);
  }
  const std::string& tail() const { return tail_; }

 private:
  sandbox::OutputSink& next_;
  std::string tail_;
};

void say(sandbox::OutputSink& output, const std::string& line) {
  output.write(sandbox::Stream::Stderr, line);
}

sandbox::Outcome denied(sandbox::OutputSink& output, std::string_view reason) {
  std::string line = "pi-sandbox: host-IPC execution denied";
  if (!reason.empty()) line += ": " + std::string(reason);
  say(output, line + "\n");
  return sandbox::Exited{1};
}

/// The host run with what is left of the timeout (compatibility C64).
sandbox::Outcome run_host(const Invocation& invocation, const Collaborators& with,
                          std::chrono::steady_clock::time_point started,
                          sandbox::OutputSink& output) {
  std::optional<std::chrono::milliseconds> left;
  if (invocation.timeout) {
    left = *invocation.timeout -
           std::chrono::duration_cast<std::chrono::milliseconds>(with.clock.now() - started);
    if (left->count() <= 0)
      return std::unexpected(sandbox::RunFailure{sandbox::RunFailureKind::TimedOut, ""});
  }
  return with.host(left, output);
}

bool retry_candidate(const sandbox::Outcome& outcome) {
  if (!outcome) return false;  // timed out, aborted, or never launched
  const auto* exited = std::get_if<sandbox::Exited>(&*outcome);
  return exited != nullptr && exited->code != 0;
}

}  // namespace

std::optional<std::string> matching_preflight_prefix(std::string_view command,
                                                     const std::vector<std::string>& prefixes) {
  const std::string_view trimmed = trim(command);
  for (const auto& prefix : prefixes) {
    if (!trimmed.starts_with(prefix)) continue;
    if (trimmed.size() == prefix.size() || is_space(trimmed[prefix.size()])) return prefix;
  }
  return std::nullopt;
}

bool is_unix_socket_refusal(std::string_view stderr_text) {
  const std::string text = lower(stderr_text);
  if (text.find("operation not permitted") == std::string::npos) return false;
  return std::ranges::any_of(std::array<std::string_view, 3>{"socket", "connect", "ipc"},
                             [&](std::string_view word) { return text.contains(word); });
}

bool is_subagent(const std::vector<std::string>& env) {
  const std::string prefix = std::string(kSubagentDepthVariable) + "=";
  for (const auto& entry : env) {
    if (!entry.starts_with(prefix)) continue;
    const std::string value(trim(std::string_view(entry).substr(prefix.size())));
    if (value.empty()) return false;  // Number("") is 0
    char* end = nullptr;
    const double depth = std::strtod(value.c_str(), &end);
    // Number() reads decimal and 0x/0b/0o forms only; strtod's other forms (inf, nan,
    // hex floats) either are not > 0 in JavaScript either or are rare enough to refuse.
    if (end != value.c_str() + value.size() || !std::isfinite(depth)) return false;
    return depth > 0;
  }
  return false;
}

approval::BoundaryRequest host_ipc_request(const Invocation& invocation,
                                           const std::optional<std::string>& prefix,
                                           std::string id) {
  approval::BoundaryRequest request;
  request.id = std::move(id);
  request.source = "sandbox-runtime";
  request.surface = approval::Surface::HostIpc;
  request.operation = "execute-host";
  request.cwd = invocation.cwd;
  request.command = invocation.command;
  request.resolved_path = invocation.program;
  request.agent_name = invocation.agent_name;
  request.tool_input_preview = std::string(prefix ? kPreflightPreview : kRetryPreview);
  request.matched_policy =
      approval::MatchedPolicy{prefix ? "preflight-prefix:" + *prefix : "unix-socket-eperm"};
  return request;
}

sandbox::Outcome run(const config::HostIpcConfig& config, const Invocation& invocation,
                     const Collaborators& with, sandbox::OutputSink& output) {
  const auto started = with.clock.now();
  const bool enabled = config.mode == config::HostIpcMode::Ask;
  const auto prefix =
      enabled ? matching_preflight_prefix(invocation.command, config.preflight_command_prefixes)
              : std::nullopt;
  if (prefix) {
    if (invocation.subagent) return denied(output, kSubagentReason);
    const auto request = host_ipc_request(invocation, prefix, with.new_id("host-ipc"));
    const auto approval = with.approve(request, approval::kHostIpcWarning);
    if (approval.action != approval::Action::Allow) return denied(output, approval.reason);
    return run_host(invocation, with, started, output);
  }

  StderrTail tail(output);
  sandbox::Outcome result = with.sandboxed(invocation.timeout, tail);
  const bool refused = is_unix_socket_refusal(tail.tail()) ||
                       (with.host_socket_refused && with.host_socket_refused());
  if (!enabled || !config.retry_on_unix_socket_error || !retry_candidate(result) || !refused)
    return result;
  if (invocation.subagent) {
    say(output, "pi-sandbox: host-IPC retry refused: " + std::string(kSubagentReason) + "\n");
    return result;
  }
  const auto request = host_ipc_request(invocation, std::nullopt, with.new_id("host-ipc"));
  const auto approval = with.approve(request, kRetryWarning);
  if (approval.action != approval::Action::Allow) return result;
  say(output, std::string(kRetryBanner));
  return run_host(invocation, with, started, output);
}

}  // namespace pisandbox::hostipc
