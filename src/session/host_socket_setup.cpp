#include "session/host_socket_setup.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <array>

#include "hostipc/host_ipc.hpp"
#include "policy/signing.hpp"
#include "session/approval_setup.hpp"

namespace pisandbox::session {

namespace {

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
    std::vector<policy::AllowedSocket> allowed, std::vector<policy::WritableArea> writable,
    approval::Broker& broker, std::shared_ptr<void> keep_alive, NetworkCommand command,
    HostSocketAsking asking, std::function<void(const std::string&)> log,
    std::function<void(const std::string&, const std::string&, std::string_view, std::string_view)>
        denied)
    : allowed_(std::move(allowed)),
      writable_(std::move(writable)),
      broker_(broker),
      keep_alive_(std::move(keep_alive)),
      command_(std::move(command)),
      asking_(asking),
      log_(std::move(log)),
      denied_(std::move(denied)) {}

void HostSockets::add_gpg_agent(std::string socket) {
  gpg_agents_.insert(std::move(socket));
}

std::string HostSockets::restricted_socket(const std::string& path) const {
  // A known agent socket is taken by the name gpg-agent gives its standard socket, so that one
  // rule finds every agent's extra socket.
  const std::filesystem::path agent =
      gpg_agents_.contains(path) ? std::filesystem::path(path).parent_path() / "S.gpg-agent"
                                 : std::filesystem::path(path);
  return policy::gpg_restricted_socket(agent).string();
}

sandbox::HostSocketAnswer HostSockets::allow(const std::string& path) {
  const std::string restricted = restricted_socket(path);
  if (restricted.empty()) return {true, {}};
  struct stat st {};
  if (::stat(restricted.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
    return refuse(path,
                  "the agent has no restricted socket " + restricted +
                      " (gpg-agent --extra-socket); its full socket would let the command "
                      "export the secret keys",
                  kPolicySource, false);
  return {true, {}, restricted};
}

bool HostSockets::refused(const std::string& path) {
  const std::lock_guard lock(mutex_);
  return refused_.contains(path);
}

sandbox::HostSocketAnswer HostSockets::refuse(const std::string& path, std::string reason,
                                              std::string_view source, bool quiet,
                                              std::string_view recovery) {
  refused_any_ = true;
  bool first = false;
  {
    const std::lock_guard lock(mutex_);
    first = refused_.emplace(path, reason).second;
  }
  // Once per socket and command, however many connections were refused at once.
  if (first && !quiet && log_) log_("host socket refused: " + path + ": " + reason);
  if (first && !quiet && denied_) denied_(path, reason, source, recovery);
  return {false, std::move(reason)};
}

bool HostSockets::writable_by_command(const std::filesystem::path& entry) const {
  return policy::in_writable_area(entry, writable_);
}

bool HostSockets::listed(const std::filesystem::path& socket) const {
  return std::ranges::any_of(allowed_, [&](const policy::AllowedSocket& entry) {
    return entry.path && std::filesystem::path(*entry.path).lexically_normal() == socket;
  });
}

bool HostSockets::allows(const std::filesystem::path& socket) const {
  return listed(socket) && !writable_by_command(socket);
}

sandbox::HostSocketAnswer HostSockets::decide(const sandbox::HostSocketRequest& socket) {
  const std::string& path = socket.path;
  if (socket.hard_link)
    return refuse(path, "a hard link to a socket: where the socket really lives is unknown",
                  kPolicySource, false);
  if (allows(path)) return allow(path);
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
  approval::ApprovalContext context{command_.session_id, command_.scope_key,
                                    std::string(kHostSocketWarning), false};
  const approval::ApprovalResult result = broker_.approve(request, context);
  if (result.action == approval::Action::Allow) return allow(path);
  return refuse(path, result.reason, approval::to_string(result.source), false,
                approval::to_string(result.recovery));
}

sandbox::HostSocketDecider host_socket_decider(std::shared_ptr<HostSockets> sockets) {
  return [sockets = std::move(sockets)](const sandbox::HostSocketRequest& socket) {
    return sockets->decide(socket);
  };
}

}  // namespace pisandbox::session
