#include "session/credential_setup.hpp"

#include "policy/git_credential.hpp"
#include "process/output_of.hpp"
#include "proxy/protocol/destination.hpp"
#include "session/approval_setup.hpp"
#include "session/host_programs.hpp"

namespace pisandbox::session {

namespace {

/// The warning line of the question: what an allow gives away.
std::string credential_warning(const std::string& target) {
  return "This gives the command your credential for " + target +
         " from the host's git credential helpers (the command can then use it as it likes).";
}

/// The host's git's environment: pi-sandbox's host programs', with no prompt of its own (a
/// question about a password belongs to the approval, not to a terminal the command shares).
std::vector<std::string> fill_environment(const std::vector<std::string>& host_env) {
  std::vector<std::string> env;
  for (const auto& entry : host_env) {
    const std::string_view name = std::string_view(entry).substr(0, entry.find('='));
    if (name == "GIT_TERMINAL_PROMPT" || name == "GIT_ASKPASS" || name == "SSH_ASKPASS" ||
        name == "GIT_DIR" || name == "GIT_WORK_TREE")
      continue;
    env.push_back(entry);
  }
  env.emplace_back("GIT_TERMINAL_PROMPT=0");
  env.emplace_back("GIT_ASKPASS=");  // set and empty: no askpass program, not even core.askPass
  return env;
}

/// The value of `name` in `env` (`NAME=value` entries), empty when unset.
std::string env_value(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& entry : env)
    if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
      return entry.substr(name.size() + 1);
  return {};
}

}  // namespace

std::optional<std::string> HostCredentials::writable_helper(const std::string& helper) const {
  // git-credential(1), "CUSTOM HELPERS": `!<shell command>`, an absolute path with arguments,
  // or a name git runs as `git credential-<name>` (its exec path, then PATH).
  const std::string_view first = std::string_view(helper).substr(0, helper.find_first_of(" \t"));
  std::optional<std::string> program;
  if (helper.starts_with('!'))
    program = host_run_program(std::string_view(helper).substr(1), host_env_);
  else if (helper.starts_with('/'))
    program = std::string(first);
  else
    program = find_program("git-credential-" + std::string(first), host_env_);
  if (!program) return std::nullopt;
  // The program and the absolute paths among its words (a script it is given), as the
  // reviewer's are checked; relative words are arguments (`gh auth git-credential`).
  std::vector<std::string> argv{*program};
  std::string_view rest = std::string_view(helper).substr(helper.starts_with('!') ? 1 : 0);
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::string_view word = rest.substr(0, rest.find_first_of(" \t"));
    if (word.starts_with('/') && word != argv.front()) argv.emplace_back(word);
    rest.remove_prefix(word.size());
  }
  const auto checked = check_reviewer_program(argv, areas_, host_env_);
  if (checked) return std::nullopt;
  std::string why = checked.error().message;
  if (const auto colon = why.find(": "); colon != std::string::npos) why.erase(0, colon + 2);
  return "the host's git credential helper `" + helper + "`: " + why +
         " (it would run on the host); nobody was asked";
}

std::optional<std::string> HostCredentials::writable_config() const {
  const auto listing = process::output_of(
      process::OutputOf{{git_, "config", "--list", "--show-origin", "--includes", "-z"},
                        host_env_,
                        "/",
                        "",
                        kCredentialFillTimeout});
  if (!listing)
    return "its git configuration could not be listed (" + listing.error().message + ")";
  const auto entries = policy::git_config_entries(*listing);
  const auto files = policy::git_config_files(*listing, env_value(host_env_, "HOME"));
  if (!entries || !files)
    return "its git configuration could not be read (" +
           (entries ? files.error().message : entries.error().message) + ")";
  for (const auto& file : *files) {
    const std::filesystem::path where = would_be_found_at(file.string());
    if (policy::in_writable_area(where, areas_))
      return "the host's git configuration is read from " + where.string() +
             ", which the command can write (a credential.helper there would run on the host); "
             "nobody was asked";
  }
  for (const auto& helper : policy::credential_helpers(*entries))
    if (auto why = writable_helper(helper)) return why;
  return std::nullopt;
}

HostCredentials::HostCredentials(
    std::shared_ptr<NetworkDecider> decider, approval::Broker& broker,
    std::shared_ptr<void> keep_alive, NetworkCommand command, std::vector<std::string> host_env,
    std::string git, std::vector<policy::WritableArea> areas,
    std::function<void(const std::string&, const std::string&, std::string_view)> denied)
    : decider_(std::move(decider)),
      broker_(broker),
      keep_alive_(std::move(keep_alive)),
      command_(std::move(command)),
      host_env_(fill_environment(host_env)),
      git_(std::move(git)),
      areas_(std::move(areas)),
      denied_(std::move(denied)) {}

proxy::HostServiceAnswer HostCredentials::refuse(const std::string& target,
                                                 const std::string& reason,
                                                 std::string_view source) {
  if (denied_) denied_(target, reason, source);
  return {false, "credential: refused " + target + ": " + reason};
}

proxy::HostServiceAnswer HostCredentials::answer(const std::string& path, const std::string& body) {
  if (path != kCredentialGetPath)
    return refuse("the request", "only " + std::string(kCredentialGetPath) + " is answered",
                  kPolicySource);
  const auto attributes = policy::parse_credential_message(body);
  if (!attributes) return refuse("the request", attributes.error().message, kPolicySource);
  const auto query = policy::credential_query(*attributes);
  if (!query) return refuse("the request", query.error().message, kPolicySource);
  const std::string target = query->protocol + "://" + query->host;
  if (query->protocol != "https")
    return refuse(target, "only https credentials are given to the sandbox", kPolicySource);
  const std::size_t colon = query->host.find(':');
  const auto host = proxy::normalise_host(query->host.substr(0, colon));
  if (!host) return refuse(target, "the host " + host.error(), kPolicySource);
  const int port = colon == std::string::npos ? 443 : std::stoi(query->host.substr(colon + 1));
  if (port < 1 || port > 65535) return refuse(target, "the port is out of range", kPolicySource);
  const std::string destination = *host + ":" + std::to_string(port);
  // network.allowedDomains allows the destination whether or not the command has connected
  // yet; an approved one counts once the command has been allowed to connect.
  if (!decider_->reached(*host, static_cast<std::uint16_t>(port)) &&
      !decider_->decide_at_once(*host, static_cast<std::uint16_t>(port)))
    return refuse(target,
                  destination +
                      " is not in network.allowedDomains and no connection to it was approved "
                      "in this command; nobody was asked",
                  kPolicySource);
  if (git_.empty()) return refuse(target, "git is not found in the host's PATH", kPolicySource);
  if (const auto writable = writable_config()) return refuse(target, *writable, kPolicySource);
  approval::BoundaryRequest request;
  request.id = new_id("sandbox-runtime-credential-");
  request.source = "sandbox-runtime";
  request.surface = approval::Surface::Credential;
  request.operation = "git-credential";
  request.cwd = command_.cwd;
  request.command = command_.command;
  request.destination = destination;
  request.agent_name = command_.agent_name;
  const approval::ApprovalContext context{command_.session_id, command_.scope_key,
                                          credential_warning("https://" + destination), true};
  const approval::ApprovalResult result = broker_.approve(request, context);
  if (result.action != approval::Action::Allow)
    return refuse(target, result.reason, approval::to_string(result.source));
  const auto output = process::output_of(process::OutputOf{{git_, "credential", "fill"},
                                                           host_env_,
                                                           "/",
                                                           policy::credential_message(*query),
                                                           kCredentialFillTimeout});
  if (!output) {
    std::string why = output.error().message;
    if (why.starts_with(git_ + " ")) why.erase(0, git_.size() + 1);
    return refuse(target,
                  "the host's git credential helpers gave none (git credential fill " + why + ")",
                  kPolicySource);
  }
  const auto lines = policy::parse_credential_message(*output);
  const auto credential = lines ? policy::credential_answer(*lines, *query) : std::nullopt;
  if (!credential)
    return refuse(target, "the host's git credential helpers gave no credential for it",
                  kPolicySource);
  return {true, policy::credential_lines(*credential)};
}

proxy::HostService host_service(std::shared_ptr<HostCredentials> credentials) {
  return [credentials = std::move(credentials)](const std::string& path, const std::string& body) {
    return credentials->answer(path, body);
  };
}

}  // namespace pisandbox::session
