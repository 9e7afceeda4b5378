// pisandbox::session — the lines said after a command that explain what its own errors do not
// (docs/security.md: "Links out of the workspace", "Remotes in the hidden home"; docs/
// configuration.md, "Signed commits").
#include "session/after_command.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>

#include "policy/git_remotes.hpp"
#include "policy/signing.hpp"
#include "policy/workspace_links.hpp"
#include "session/policy_setup.hpp"

namespace pisandbox::session {

namespace {

/// Whether the command ran and failed: a non-zero exit or a signal.
bool failed(const sandbox::Outcome& outcome) {
  if (!outcome) return false;
  if (const auto* exited = std::get_if<sandbox::Exited>(&*outcome)) return exited->code != 0;
  return true;
}

/// After a failed command: one line for each link out of the workspace that the command named
/// and that leads where the sandbox hides it or keeps it read-only (docs/security.md, "Links
/// out of the workspace"); its ENOENT or EROFS named the link's path, not the reason.
void explain_outward_links(const AfterCommand& p, const std::vector<std::string>& words,
                           const std::filesystem::path& cwd) {
  const policy::LinkScan scan = policy::find_outward_links(p.policy);
  for (const auto& [link, word] : policy::links_named(scan.links, words, cwd))
    if (link->access.view == policy::OutsideView::Hidden ||
        link->access.view == policy::OutsideView::ReadOnly)
      p.say(policy::outward_link_line(*link, policy::link_as_spelled(*link, word, cwd)));
}

/// Whether `words` hold a word `git` (or a path ending in `/git`).
bool names_git(const std::vector<std::string>& words) {
  return std::ranges::any_of(
      words, [](const std::string& w) { return w == "git" || w.ends_with("/git"); });
}

/// The remotes (name: URL) of the repository around the workspace, none without one.
std::map<std::string, std::string> repository_remotes(const AfterCommand& p) {
  return p.policy.git ? remote_urls(p.policy.git->common_dir / "config")
                      : std::map<std::string, std::string>{};
}

/// After a failed command: one line for each local repository its git read as a remote (clone,
/// fetch, pull, push, ls-remote of a path or of a remote of the repository whose URL is a path)
/// that the sandbox hides (docs/security.md, "Remotes in the hidden home"); git's own error
/// (`fatal: '<path>' does not appear to be a git repository`) does not say why.
void explain_hidden_remotes(const AfterCommand& p, const std::vector<std::string>& words,
                            const std::filesystem::path& cwd) {
  if (!names_git(words)) return;
  const std::map<std::string, std::string> remotes = repository_remotes(p);
  // Compared as written, symlinks not followed: the remote's URL is the command's to set, and
  // following links in the hidden home would tell it where they lead.
  for (const auto& path : policy::local_remotes(words, remotes, p.policy.home, cwd))
    if (const auto access = policy::outside_access(p.policy, path);
        access.view == policy::OutsideView::Hidden)
      p.say(policy::hidden_remote_line(path, access));
}

/// After any command: one line for each local repository its `git push` pushed to that the
/// sandbox shows copy-on-write or read-only (docs/security.md, "Remotes in the hidden home"):
/// git reports a push into the sandbox's own layer as a success, and it never reaches the host.
void explain_unpushed_remotes(const AfterCommand& p, const std::vector<std::string>& words,
                              const std::filesystem::path& cwd) {
  if (!names_git(words)) return;
  const std::map<std::string, std::string> remotes = repository_remotes(p);
  for (const auto& path : policy::pushed_remotes(words, remotes, p.policy.home, cwd))
    if (const auto access = policy::outside_access(p.policy, path);
        access.view == policy::OutsideView::CopyOnWrite ||
        access.view == policy::OutsideView::ReadOnly)
      p.say(policy::unpushed_remote_line(path, access));
}

/// Why the agent git signs through cannot sign for the command, if it cannot
/// (policy::AgentGap); nothing for a format pi-sandbox does not know the agent of (x509, or gpg
/// with a home whose socket name it cannot tell).
std::optional<policy::AgentGap> agent_gap(const AfterCommand& p,
                                          const policy::SigningFiles& signing) {
  const bool ssh = signing.signing.format == policy::SigningFormat::Ssh;
  if (signing.agent_socket.empty())
    return ssh ? std::optional(policy::AgentGap::NoAgent) : std::nullopt;
  struct stat st {};
  if (::stat(signing.agent_socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
    return policy::AgentGap::NotRunning;
  if (!p.host_sockets.allows(signing.agent_socket)) return policy::AgentGap::NotAllowed;
  return std::nullopt;
}

/// Whether the signing agent's socket (policy::SigningFiles::agent_socket) was refused during
/// the command.
bool signing_agent_refused(const AfterCommand& p) {
  const policy::SigningFiles& signing = p.policy.signing;
  return signing.signing.configured() && !signing.agent_socket.empty() &&
         p.host_sockets.refused(signing.agent_socket.string());
}

/// After a failed command: one line when git's signing agent (policy::SigningFiles) was among
/// the host sockets refused, naming the hostIPC.allowedSockets entry that lets it sign
/// (docs/configuration.md, "Signed commits"); gpg's and ssh-keygen's own errors name no socket.
/// One when the command line asked git to sign with no signing setting (policy::asks_to_sign()).
///
/// For a command that may sign (policy::may_sign()), also: one line when user.signingKey names a
/// key file the sandbox hides (a private key), with what to set instead; and, unless the refusal
/// said it, one line when no agent can sign for the sandbox (none, not running; not allowed,
/// with such a key).

void explain_signing(const AfterCommand& p, const std::vector<std::string>& words) {
  const policy::SigningFiles& signing = p.policy.signing;
  if (!signing.signing.configured()) {
    if (policy::asks_to_sign(words)) p.say(policy::unconfigured_signing_hint());
    return;
  }
  const bool refused = signing_agent_refused(p);
  // Listed but where the command can write: adding the entry again would change nothing.
  const bool listed_writable = !signing.agent_socket.empty() &&
                               p.host_sockets.listed(signing.agent_socket) &&
                               p.host_sockets.writable_by_command(signing.agent_socket);
  if (refused)
    p.say(listed_writable ? policy::signing_writable_socket_hint(signing)
                          : policy::signing_socket_hint(signing));
  if (!policy::may_sign(words)) return;
  if (signing.ssh_key_hidden) p.say(policy::hidden_ssh_key_hint(signing.signing));
  // An agent that is running but not allowed is refused when the signing program asks it: that
  // refusal said it, and without one the program never asked (it failed before, on a hidden key,
  // or git never signed).
  const auto gap = agent_gap(p, signing);
  if (gap && !refused && (*gap != policy::AgentGap::NotAllowed || signing.ssh_key_hidden))
    p.say(*gap == policy::AgentGap::NotAllowed && listed_writable
              ? policy::signing_writable_socket_hint(signing)
              : policy::signing_agent_hint(signing, *gap));
}

}  // namespace

void explain_after_command(const AfterCommand& after, const sandbox::Outcome& outcome,
                           const std::vector<std::string>& words,
                           const std::filesystem::path& cwd) {
  if (failed(outcome)) explain_outward_links(after, words, cwd);
  // A refused signing agent is explained even when the shell hid git's failure
  // (`git commit -S; echo`): the refusal itself was said during the command.
  if (failed(outcome) || signing_agent_refused(after)) explain_signing(after, words);
  if (failed(outcome)) explain_hidden_remotes(after, words, cwd);
  if (outcome) explain_unpushed_remotes(after, words, cwd);
}

}  // namespace pisandbox::session
