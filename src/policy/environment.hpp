// pisandbox::policy — the environment a sandboxed command inherits (pure: no syscalls, no I/O).
//
// Source: docs/security.md ("Environment"), docs/cases.md C-17 (credentials inherited from the
// caller). The caller's environment goes in less the variables whose names
// carry credentials (kDefaultRemoved), adjusted by the trusted configuration's
// `environment.passThrough` and `environment.remove`; then pi-sandbox's own variables (the
// private temp directory, `PI_SANDBOX=1`, `SANDBOX_RUNTIME=1`, the proxy's knobs of
// proxy_environment.hpp) are added, replacing the caller's values of the same names.
//
// A pattern is a variable name in which `*` matches any run of characters (also none):
// `GITHUB_TOKEN`, `AWS_*`, `*_API_KEY`, `*TOKEN*`. Names are compared without regard to ASCII
// case, because tools read both spellings (`http_proxy`, `HTTP_PROXY`) and a secret under
// either is the same secret.
#pragma once

#include <array>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// The names removed from every sandboxed command's environment unless
/// `environment.passThrough` keeps them (docs/security.md, "Environment", lists each with the
/// reason). `*_API_KEY`, `GITHUB_TOKEN`, `GH_TOKEN`, `NPM_TOKEN`, `NODE_AUTH_TOKEN`,
/// `PGPASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS` and the like are covered by the substrings.
/// Agent sockets (`SSH_AUTH_SOCK`, `GPG_AGENT_INFO`) stay: a socket's path is no secret, the
/// sandbox refuses to connect to it, and that refusal is what offers the host-IPC retry
/// (docs/host-ipc.md) whose host run then reaches the agent. `GIT_CONFIG_PARAMETERS` holds
/// the settings of a `git -c` that started the caller (git(1), `-c`), an `http.extraHeader`
/// with a token as easily as any (git-config(1), ENVIRONMENT).
inline constexpr std::array<std::string_view, 13> kDefaultRemoved = {"*KEY*",
                                                                     "*SECRET*",
                                                                     "*TOKEN*",
                                                                     "*PASSWORD*",
                                                                     "*PASSWD*",
                                                                     "*PASSPHRASE*",
                                                                     "*CREDENTIAL*",
                                                                     "*_AUTH",
                                                                     "*_PAT",
                                                                     "AWS_*",
                                                                     "DOCKER_AUTH_CONFIG",
                                                                     "MYSQL_PWD",
                                                                     "GIT_CONFIG_PARAMETERS"};

/// The names kept although a kDefaultRemoved rule matches them (docs/security.md,
/// "Environment"): paths to public certificate bundles, which tools need to verify TLS and
/// which hold no secret (`AWS_CA_BUNDLE` would otherwise go by `AWS_*`). Also
/// `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE` (`*_CA_BUNDLE`), OpenSSL's `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` (SSL_CTX_set_default_verify_paths(3)), Node.js's `NODE_EXTRA_CA_CERTS` and
/// pip's `PIP_CERT`. An `environment.remove` entry still removes them.
inline constexpr std::array<std::string_view, 5> kDefaultKept = {
    "*_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "PIP_CERT"};

/// The `environment` section of the trusted configuration (docs/configuration.md), entries as
/// written (each valid per is_variable_pattern), duplicates removed keeping the first.
///   pass_through: names kept even when a default rule would remove them.
///   remove: names removed as well (wins over pass_through).
struct EnvironmentSpec {
  std::vector<std::string> pass_through;
  std::vector<std::string> remove;
  friend bool operator==(const EnvironmentSpec&, const EnvironmentSpec&) = default;
};

/// Whether `text` is a valid pattern: non-empty, only ASCII letters, digits, `_` and `*`.
[[nodiscard]] bool is_variable_pattern(std::string_view text);

/// Whether `name` matches `pattern` (`*` matches any run of characters, ASCII case ignored).
[[nodiscard]] bool matches_variable(std::string_view pattern, std::string_view name);

/// Why a variable of the caller was removed.
///   Default: a kDefaultRemoved rule; Configuration: an `environment.remove` entry.
enum class RemovalSource { Default, Configuration };

/// One removed variable: its name (never its value) and the rule that removed it.
struct RemovedVariable {
  std::string name;
  std::string rule;
  RemovalSource source = RemovalSource::Default;
  friend bool operator==(const RemovedVariable&, const RemovedVariable&) = default;
};

/// The environment a command gets and what was taken out of the caller's.
///   env: `NAME=value` entries in the caller's order, then pi-sandbox's own.
///   removed: the caller's removed variables, in the caller's order.
struct CommandEnvironment {
  std::vector<std::string> env;
  std::vector<RemovedVariable> removed;
};

/// The decision for one name, first match wins: an `environment.remove` entry → removed;
/// an `environment.passThrough` entry or a kDefaultKept name → kept; a kDefaultRemoved rule →
/// removed; else kept.
/// Returns the removal, or a RemovedVariable with an empty rule when the name is kept.
[[nodiscard]] RemovedVariable decide_variable(std::string_view name, const EnvironmentSpec& spec);

/// The caller's environment (`NAME=value` entries; an entry without `=` is a name with no
/// value) less the variables decide_variable() removes. Removes nothing else.
[[nodiscard]] CommandEnvironment filter_environment(std::span<const std::string> caller,
                                                    const EnvironmentSpec& spec);

/// The whole environment of a sandboxed command: filter_environment(), then the caller's
/// `TMPDIR`, `TMP`, `TEMP`, `PI_SANDBOX`, `SANDBOX_RUNTIME` and proxy variables dropped, then
/// `TMPDIR=/tmp`, `TMP=/tmp`, `TEMP=/tmp` (compatibility C24), `PI_SANDBOX=1`, `SANDBOX_RUNTIME=1`
/// (C83), proxy_environment() (`JAVA_TOOL_OPTIONS` merged with the caller's value, when
/// it was kept) and git_credential_environment() after the caller's git_config_count() entries
/// appended (the caller's `GIT_CONFIG_COUNT`, and its `GIT_CONFIG_KEY_<n>` and
/// `GIT_CONFIG_VALUE_<n>` from that count on, which git would not read, dropped).
///   self_exe: pi-sandbox's own absolute path (for the SSH ProxyCommand).
[[nodiscard]] CommandEnvironment command_environment(std::span<const std::string> caller,
                                                     const EnvironmentSpec& spec,
                                                     const std::filesystem::path& self_exe);

/// How many entries of git's configuration `env` gives in `GIT_CONFIG_COUNT` (git-config(1),
/// ENVIRONMENT: `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>` for n below it): its decimal
/// value, 0 when it is absent, empty, not a number below 10000, or when a `GIT_CONFIG_KEY_<n>`
/// below it is missing (git refuses such a configuration; the credential filter's `*KEY*` rule
/// removes the keys unless `environment.passThrough` keeps them: docs/security.md,
/// "Environment").
[[nodiscard]] std::size_t git_config_count(std::span<const std::string> env);

/// The entries that make pi-sandbox's helper the only credential helper of the command's git
/// (docs/network.md, "Credentials for HTTPS"), after the caller's `first` entries of git's
/// configuration in the environment: `GIT_CONFIG_COUNT=<first + 2>`, `GIT_CONFIG_KEY_<first>=
/// credential.helper` with an empty `GIT_CONFIG_VALUE_<first>` (git-config(1): an empty helper
/// clears the list read so far, so the user's helpers, whose files the sandbox hides, are not
/// tried), then `GIT_CONFIG_KEY_<first + 1>=credential.helper` with `GIT_CONFIG_VALUE_<first +
/// 1>=!'<self_exe>' credential-helper` (git runs a value starting with `!` with the shell).
[[nodiscard]] std::vector<std::string> git_credential_environment(
    const std::filesystem::path& self_exe, std::size_t first);

/// The names command_environment() sets itself, in the order it appends them.
[[nodiscard]] std::vector<std::string> sandbox_variable_names();

}  // namespace pisandbox::policy
