#include "session/host_socket_setup.hpp"

#include <sys/stat.h>

#include <array>
#include <cstdlib>

#include "hostipc/host_ipc.hpp"
#include "session/approval_setup.hpp"

namespace pisandbox::session {

namespace {

/// The real path of `path` on the host now, empty when it does not exist.
std::string real_path(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return {};
  std::string out(real);
  std::free(real);
  return out;
}

/// Sockets of the C library's name services, looked for on every user and group lookup.
bool name_service_socket(std::string_view path) {
  constexpr std::array<std::string_view, 4> kPrefixes = {
      "/run/nscd/", "/var/run/nscd/", "/run/systemd/userdb/", "/var/run/systemd/userdb/"};
  for (const auto prefix : kPrefixes)
    if (path.starts_with(prefix)) return true;
  return false;
}

}  // namespace

HostSockets::HostSockets(
    std::vector<policy::AllowedSocket> allowed, approval::Broker& broker,
    std::shared_ptr<void> keep_alive, NetworkCommand command, HostSocketAsking asking,
    std::function<void(const std::string&)> log,
    std::function<void(const std::string&, const std::string&, std::string_view)> denied)
    : allowed_(std::move(allowed)),
      broker_(broker),
      keep_alive_(std::move(keep_alive)),
      command_(std::move(command)),
      asking_(asking),
      log_(std::move(log)),
      denied_(std::move(denied)) {}

sandbox::HostSocketAnswer HostSockets::refuse(const std::string& path, std::string reason,
                                              std::string_view source, bool quiet) {
  refused_any_ = true;
  {
    const std::lock_guard lock(mutex_);
    refused_.emplace(path, reason);
  }
  if (!quiet && log_) log_("host socket refused: " + path + ": " + reason);
  if (!quiet && denied_) denied_(path, reason, source);
  return {false, std::move(reason)};
}

sandbox::HostSocketAnswer HostSockets::decide(const std::string& path) {
  for (const auto& entry : allowed_)
    if (entry.path && real_path(*entry.path) == path) return {true, {}};
  {
    const std::lock_guard lock(mutex_);
    if (const auto it = refused_.find(path); it != refused_.end()) return {false, it->second};
  }
  if (name_service_socket(path))
    return refuse(path, "a name-service socket (the C library falls back to the files)",
                  kPolicySource, true);
  if (asking_ == HostSocketAsking::Subagent)
    return refuse(path, std::string(hostipc::kSubagentReason), kPolicySource, false);
  approval::BoundaryRequest request;
  request.id = new_id("sandbox-runtime-host-ipc-");
  request.source = "sandbox-runtime";
  request.surface = approval::Surface::HostIpc;
  request.operation = std::string(kConnectUnixOperation);
  request.cwd = command_.cwd;
  request.command = command_.command;
  request.path = path;
  request.agent_name = command_.agent_name;
  request.matched_policy = approval::MatchedPolicy{"host-socket"};
  approval::ApprovalContext context{command_.session_id, command_.scope_key, "", false};
  const approval::ApprovalResult result = broker_.approve(request, context);
  if (result.action == approval::Action::Allow) return {true, {}};
  return refuse(path, result.reason, approval::to_string(result.source), false);
}

sandbox::HostSocketDecider host_socket_decider(std::shared_ptr<HostSockets> sockets) {
  return [sockets = std::move(sockets)](const std::string& path) { return sockets->decide(path); };
}

}  // namespace pisandbox::session
