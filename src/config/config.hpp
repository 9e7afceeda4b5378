// pisandbox::config — the trusted configuration: schema and strict parsing (pure, no I/O).
//
// Source: compatibility C1–C8 (schema, defaults, messages), C9 (location), C10–C12 (network
// domain policies) and docs/configuration.md (approval section, duplicate keys, `config check`).
//
// The parser refuses anything it does not understand rather than silently weakening
// isolation: unknown keys, duplicate keys, wrong types, null values and out-of-range
// numbers are errors, never defaults. Every message starts with kInvalidPrefix.
#pragma once

#include <cstddef>
#include <expected>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "policy/domain_pattern.hpp"
#include "policy/environment.hpp"
#include "policy/limits.hpp"

namespace pisandbox::config {

/// Prefix of every schema error (compatibility C4).
inline constexpr std::string_view kInvalidPrefix = "invalid pi-sandbox configuration: ";
/// Prefix of every read error, followed by `<path>: <reason>` (compatibility C1).
inline constexpr std::string_view kReadFailedPrefix = "failed to read pi-sandbox configuration at ";
/// Prefix of every JSON syntax error, followed by `<path>: <line>:<column>: <reason>`
/// (compatibility C1).
inline constexpr std::string_view kInvalidJsonPrefix =
    "invalid JSON in pi-sandbox configuration at ";

/// Defaults and bounds of the approval section (docs/configuration.md), in seconds.
inline constexpr int kDefaultReviewerTimeoutSeconds = 90;
inline constexpr int kMaxReviewerTimeoutSeconds = 600;
inline constexpr int kDefaultGrantTtlSeconds = 60;
inline constexpr int kMaxGrantTtlSeconds = 300;
/// `approval.questionTimeoutSeconds` (docs/configuration.md, "Schema"): 0 (the default) sets no
/// limit of its own, so a question waits as long as the command may run; at most one day.
inline constexpr int kDefaultQuestionTimeoutSeconds = 0;
inline constexpr int kMaxQuestionTimeoutSeconds = 86400;
/// `approval.reviewerRetries`: how many times a failed review is tried again (the reviewer's
/// timeout and retries of the Sandbox Runtime's broker, docs/compatibility.md C72).
inline constexpr int kDefaultReviewerRetries = 2;
inline constexpr int kMaxReviewerRetries = 5;

/// `approval.reviewerFailureMode` (docs/approvals.md, "When review fails"): `deny` (default), a
/// failed review denies; `defer`, the human is asked instead.
enum class ReviewerFailureMode { Deny, Defer };

/// `subagents.provider` (compatibility C5): `builtin` (default), `pi-subagents`, `off`.
enum class SubagentProvider { Builtin, PiSubagents, Off };

/// `subagents.externalWorkerIsolation` (docs/configuration.md, "Schema"; integrations/pi/README.md,
/// "External workers"): with provider `pi-subagents`, `off` (default) leaves the external
/// orchestrator's workers as it starts them; `enforce` makes the Pi extension start each of them in
/// a sandbox of its own, and refuse to start any where it cannot.
enum class ExternalWorkerIsolation { Off, Enforce };

/// `hostIPC.mode` (compatibility C7): `off` (default) or `ask`.
enum class HostIpcMode { Off, Ask };

/// `pi.fileTools` (docs/configuration.md, "Schema"; docs/security.md, "Pi's file tools"): where the
/// Pi extension does the file I/O of Pi's `read`, `write`, `edit`, `ls`, `grep` and `find` tools.
/// `sandboxed` (default): inside a sandbox of the workspace, under the same policy as a command;
/// `host`: Pi's own tools, unconfined.
enum class PiFileTools { Sandboxed, Host };

/// The configuration spelling of a provider: "builtin", "pi-subagents" or "off".
std::string_view to_string(SubagentProvider provider);
/// The configuration spelling of `subagents.externalWorkerIsolation`: "off" or "enforce".
std::string_view to_string(ExternalWorkerIsolation isolation);
/// The configuration spelling of a host-IPC mode: "off" or "ask".
std::string_view to_string(HostIpcMode mode);
/// The configuration spelling of `pi.fileTools`: "sandboxed" or "host".
std::string_view to_string(PiFileTools file_tools);
/// The configuration spelling of `approval.reviewerFailureMode`: "deny" or "defer".
std::string_view to_string(ReviewerFailureMode mode);

/// `subagents` section (compatibility C2).
///   worker_extensions: `subagents.workerExtensions`, absolute paths of Pi extensions each
///   built-in worker loads with `-e` (docs/configuration.md, "Schema": a worker sees no Pi
///   configuration of the hidden home, so a model provider registered by an extension must be named
///   here), duplicates removed keeping the first.
///   external_worker_isolation: `subagents.externalWorkerIsolation`, read by the Pi extension only.
struct SubagentsConfig {
  SubagentProvider provider = SubagentProvider::Builtin;
  std::vector<std::string> worker_extensions;
  ExternalWorkerIsolation external_worker_isolation = ExternalWorkerIsolation::Off;
  friend bool operator==(const SubagentsConfig&, const SubagentsConfig&) = default;
};

/// `pi` section: settings of the Pi extension (integrations/pi), read by it from
/// `pi-sandbox config check`. Trusted like the rest: never read from the project.
struct PiConfig {
  PiFileTools file_tools = PiFileTools::Sandboxed;
  friend bool operator==(const PiConfig&, const PiConfig&) = default;
};

/// `filesystem` section (compatibility C6).
///   additional_allow_read: absolute paths (start with `/`, no NUL), exactly as written (not
///     trimmed, not normalised), duplicates removed keeping the first occurrence.
///   additional_allow_write: `filesystem.additionalAllowWrite`, validated the same way:
///     directories that stay writable and persist (caches); which paths are refused (the
///     home, `/`, protected paths) is decided with the policy (policy::refuse_additional_write).
///   expose_home_toolchains: `filesystem.exposeHomeToolchains` (default true): `$PATH`
///     entries inside the hidden home and the toolchain roots they need are re-exposed
///     (docs/configuration.md).
///   strict_protection: `filesystem.protection` is "strict" (default "guard"): missing protected
///     names are held by read-only placeholders instead of being guarded (docs/security.md,
///     "The guard").
///   expose_credentials: `filesystem.exposeCredentials`: credentials handed in on purpose,
///     relative to the home without the `~/` they are written with (`.config/gh/hosts.yml`),
///     each a row of the credential table or a file below a directory row
///     (policy::is_credential_name(); docs/security.md, "Handing a credential in"), duplicates
///     removed keeping the first.
struct FilesystemConfig {
  std::vector<std::string> additional_allow_read;
  std::vector<std::string> additional_allow_write = {};
  bool expose_home_toolchains = true;
  bool strict_protection = false;
  std::vector<std::string> expose_credentials = {};
  friend bool operator==(const FilesystemConfig&, const FilesystemConfig&) = default;
};

/// `hostIPC` section (compatibility C7).
///   preflight_command_prefixes: trimmed, non-empty, duplicates removed keeping the first.
///   retry_on_unix_socket_error: whether a command that failed on a Unix-socket error may
///     be offered for a host run.
///   allowed_sockets: host Unix sockets a sandboxed command may connect to without asking
///     (docs/host-ipc.md, "Host sockets"), as written: an absolute path, `~/...`, or one
///     starting with `$NAME` / `${NAME}` (expanded from the caller's environment when a command
///     starts: policy::expand_socket_path()); trimmed, duplicates removed keeping the first.
struct HostIpcConfig {
  HostIpcMode mode = HostIpcMode::Off;
  std::vector<std::string> preflight_command_prefixes;
  bool retry_on_unix_socket_error = false;
  std::vector<std::string> allowed_sockets = {};
  friend bool operator==(const HostIpcConfig&, const HostIpcConfig&) = default;
};

/// `network` section (compatibility C10–C12): canonical patterns, duplicates (same
/// canonical text) removed keeping the first. Empty lists mean per-connection review only.
///   denied_domain_reasons: `network.deniedDomainReasons` (docs/configuration.md), keyed by
///     the canonical text of a `denied_domains` entry (DomainPattern::text()); the value is the
///     trimmed reason, 1-200 characters, shown after that entry in every refusal it causes.
struct NetworkConfig {
  std::vector<policy::DomainPattern> allowed_domains;
  std::vector<policy::DomainPattern> denied_domains;
  std::map<std::string, std::string, std::less<>> denied_domain_reasons = {};
  friend bool operator==(const NetworkConfig&, const NetworkConfig&) = default;
};

/// `approval` section (docs/configuration.md).
///   reviewer: the automatic reviewer program (absolute path) and its arguments, run without
///     a shell; empty when no reviewer is configured.
///   reviewer_timeout_seconds: how long the reviewer may take, 1-600 seconds (default 90).
///   grant_ttl_seconds: how long an approval grant stays usable, 1-300 seconds (default 60).
///   question_timeout_seconds: how long a question for the human stays open before it is
///     refused unanswered, 0-86400 seconds; 0 (default): no limit of its own, the question
///     waits as long as the command may run (docs/configuration.md, "Schema").
///   reviewer_retries: how many times a failed review is tried again, 0-5 (default 2).
///   reviewer_failure: what a review still failing after its retries becomes.
struct ApprovalConfig {
  std::vector<std::string> reviewer;
  int reviewer_timeout_seconds = kDefaultReviewerTimeoutSeconds;
  int reviewer_retries = kDefaultReviewerRetries;
  ReviewerFailureMode reviewer_failure = ReviewerFailureMode::Deny;
  int grant_ttl_seconds = kDefaultGrantTtlSeconds;
  int question_timeout_seconds = kDefaultQuestionTimeoutSeconds;
  friend bool operator==(const ApprovalConfig&, const ApprovalConfig&) = default;
};

/// The whole trusted configuration. A default-constructed Config is the configuration used
/// when no file exists (compatibility C3). Immutable once parsed: share it as
/// `std::shared_ptr<const Config>`.
struct Config {
  SubagentsConfig subagents;
  FilesystemConfig filesystem;
  HostIpcConfig host_ipc;
  NetworkConfig network;
  ApprovalConfig approval;
  /// `pi`: the Pi extension's own settings.
  PiConfig pi;
  /// `limits`: what one command may cost the host (policy/limits.hpp; docs/configuration.md).
  ///   maxProcesses: 8-4194304 (default 1024); memory and tmpfs: bytes (16 MiB to 1 PiB) or
  ///   "N%" of the machine's memory (defaults "50%" and "25%"); cpu: 1-10000 (default 50).
  policy::LimitsSpec limits;
  /// `environment`: which of the caller's variables a sandboxed command inherits
  /// (policy/environment.hpp; docs/configuration.md, docs/security.md "Environment").
  ///   passThrough / remove: variable names or `*` patterns (letters, digits, `_`, `*`).
  policy::EnvironmentSpec environment;
  friend bool operator==(const Config&, const Config&) = default;
};

/// Why a configuration text was refused. parse() has no path, so the loader (or any caller
/// that knows where the text came from) renders it with describe().
struct ConfigError {
  enum class Kind {
    InvalidJson,  ///< not JSON: line, column and reason are set
    Invalid,      ///< JSON, but not a valid configuration: message is set
  };
  Kind kind = Kind::Invalid;
  /// Kind::Invalid: the whole message, starting with kInvalidPrefix, e.g.
  /// `invalid pi-sandbox configuration: unknown root keys: a, b`.
  std::string message;
  /// Kind::InvalidJson: 1-based line and column (in bytes) of the last byte the parser read:
  /// the last byte of the offending token, or one past the end of the text.
  std::size_t line = 0;
  std::size_t column = 0;
  /// Kind::InvalidJson: the JSON parser's reason, e.g. `syntax error while parsing value -
  /// unexpected end of input; expected '[', '{', or a literal`.
  std::string reason;
  /// Optional second line saying what is accepted (e.g. why a domain pattern was refused).
  std::string hint;

  /// The one-line message for a configuration read from `path`:
  ///   Kind::Invalid:     message (the path is not repeated, as in the reference);
  ///   Kind::InvalidJson: `invalid JSON in pi-sandbox configuration at <path>: <line>:<column>:
  ///                      <reason>`.
  [[nodiscard]] std::string describe(const std::filesystem::path& path) const;

  /// describe(path) and hint as a core::Error (code 0).
  [[nodiscard]] core::Error to_error(const std::filesystem::path& path) const;
};

/// Parses the text of a configuration file (UTF-8 JSON, RFC 8259; no comments, no trailing
/// content) into a Config with defaults filled in.
///
/// Errors, in document order (the first one found is returned):
///   - not JSON, or an empty text: Kind::InvalidJson;
///   - a key twice in the root object or in a section: `duplicate <where> key: <k>`;
///   - `root must be an object`; `unknown <where> key: a` / `unknown <where> keys: a, b`
///     (where = root, subagents, filesystem, hostIPC, network, approval, limits, environment; keys
///     in document
///     order); `<section> must be an object` (also for arrays and null);
///   - one message per field (see the docs/configuration.md schema), e.g.
///     `subagents.provider must be one of builtin, pi-subagents, off`,
///     `subagents.externalWorkerIsolation must be off or enforce`,
///     `network.allowedDomains[0] contains an invalid domain pattern: https://github.com`,
///     `approval.reviewerTimeoutSeconds must be an integer between 1 and 600`,
///     `approval.questionTimeoutSeconds must be an integer between 0 and 86400`,
///     `environment.remove[0] contains an invalid variable name pattern: A-B`.
/// A null value is an error like any other wrong type, never "use the default". Integers are
/// written without fraction or exponent (90, not 90.0 or 9e1). Never throws.
std::expected<Config, ConfigError> parse(std::string_view json_text);

/// The effective configuration as pretty JSON (2-space indent, no trailing newline) with
/// every default filled in, keys in schema order; `approval.reviewer` is omitted when no
/// reviewer is configured. parse(to_json(c)) == c for every parsed c. Printed by
/// `pi-sandbox config check` (docs/configuration.md).
std::string to_json(const Config& config);

}  // namespace pisandbox::config
