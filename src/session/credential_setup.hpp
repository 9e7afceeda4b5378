// pisandbox::session — the user's HTTPS credentials for the command's git, kept on the host:
// `pi-sandbox credential-helper` inside asks through the proxy (proxy::kHostServiceHost), and
// this answers for a destination the command reached only, after the approval broker's
// `credential` question, with what the user's own git credential helpers give on the host.
//
// Source: docs/network.md, "Credentials for HTTPS"; git-credential(1) (the protocol and
// `git credential fill`); docs/approvals.md, "The order of a decision".
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "approval/broker.hpp"
#include "policy/host_environment.hpp"
#include "proxy/server.hpp"
#include "session/network_setup.hpp"

namespace pisandbox::session {

/// The path of a credential request: `POST http://pi-sandbox.invalid/credential/get`.
inline constexpr std::string_view kCredentialGetPath = "/credential/get";

/// How long the host's `git credential fill` may take, in seconds.
inline constexpr std::chrono::seconds kCredentialFillTimeout{30};

/// Answers the credential requests of one command (proxy::HostService). Thread-safe.
class HostCredentials {
 public:
  /// `broker` must stay valid as long as `keep_alive`; `decider` tells which destinations the
  /// command reached (NetworkDecider::reached()). `host_env` is the environment of what
  /// pi-sandbox starts on the host (host_program_environment()); `git` the host's git found in
  /// its PATH (empty: none, every request is refused); `areas` the command's writable areas
  /// (writable_areas()): a host git configuration read from one is refused. `denied` gets the
  /// target
  /// (`https://<host>`), the reason and who refused, as NetworkDecider's does.
  HostCredentials(
      std::shared_ptr<NetworkDecider> decider, approval::Broker& broker,
      std::shared_ptr<void> keep_alive, NetworkCommand command, std::vector<std::string> host_env,
      std::string git, std::vector<policy::WritableArea> areas,
      std::function<void(const std::string&, const std::string&, std::string_view)> denied);

  /// One request of the helper: `path` kCredentialGetPath, `body` git's message
  /// (git-credential(1)). In order: the message is parsed (policy::parse_credential_message,
  /// policy::credential_query); the protocol must be `https`; the host (`name[:port]`, port 443
  /// by default) is normalised and must be a destination NetworkDecider::decide() allowed for
  /// this command (network.allowedDomains or an approval), else refused without a question;
  /// every file the host's git configuration is read from (policy::git_config_files(), as
  /// the host finds it) must lie outside `areas`, else refused without a question (a
  /// `credential.helper` the command wrote would run on the host: docs/network.md,
  /// "Credentials for HTTPS"), and so must every helper program it names;
  /// then the broker decides a `credential`/`git-credential` request, `destination`
  /// `<host>:<port>`, which may be remembered for the command or the session; then the host's
  /// `git credential fill` runs as the user, in `/` (no repository's configuration), with
  /// GIT_TERMINAL_PROMPT=0 and no askpass program, for at most kCredentialFillTimeout; its
  /// answer is taken only for this protocol and host (policy::credential_answer).
  /// Given: `username=<u>\npassword=<p>\n`. Refused: one line, `credential: refused
  /// https://<host>: <why>`, which the helper prints after `pi-sandbox: `. The secret is never
  /// logged: the audit log has the broker's lines (host and decision).
  [[nodiscard]] proxy::HostServiceAnswer answer(const std::string& path, const std::string& body);

 private:
  /// Why the host's git configuration cannot be trusted with this command (a file it is read
  /// from lies in `areas_`, or it cannot be listed), or nullopt.
  [[nodiscard]] std::optional<std::string> writable_config() const;
  /// Why the credential helper `helper` (a value of credential.helper) would run a file the
  /// command can write (its program, an absolute path among its words, or their `#!`
  /// interpreters: check_reviewer_program()), or nullopt.
  [[nodiscard]] std::optional<std::string> writable_helper(const std::string& helper) const;
  proxy::HostServiceAnswer refuse(const std::string& target, const std::string& reason,
                                  std::string_view source);

  std::shared_ptr<NetworkDecider> decider_;
  approval::Broker& broker_;
  std::shared_ptr<void> keep_alive_;
  NetworkCommand command_;
  std::vector<std::string> host_env_;
  std::string git_;
  std::vector<policy::WritableArea> areas_;
  std::function<void(const std::string&, const std::string&, std::string_view)> denied_;
};

/// A proxy::HostService over `credentials` (which it keeps alive).
[[nodiscard]] proxy::HostService host_service(std::shared_ptr<HostCredentials> credentials);

}  // namespace pisandbox::session
