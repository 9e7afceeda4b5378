// pisandbox::approval::BoundaryRequest — one request to cross a sandbox boundary, its JSON
// form, and the hash a grant is bound to.
//
// Source: compatibility C36 (network requests), C69 (fields and validation), C73 (request
// hash over the canonical JSON, `id` excluded, the field list kept exact).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace pisandbox::approval {

/// Which boundary a request crosses. Serialised as `network`, `host-ipc`,
/// `filesystem-read`, `filesystem-write` (compatibility C69), and `credential`: the user's
/// HTTPS credential for one host, from the host's git credential helpers, given to the command
/// (docs/network.md, "Credentials for HTTPS").
enum class Surface { Network, HostIpc, FilesystemRead, FilesystemWrite, Credential };

/// `network`, `host-ipc`, `filesystem-read`, `filesystem-write` or `credential`; empty for a
/// value that is not one of the enumerators.
[[nodiscard]] std::string_view to_string(Surface surface);

/// Parses the five names of to_string(Surface) (exact, lowercase); nullopt otherwise.
[[nodiscard]] std::optional<Surface> surface_from_string(std::string_view text);

/// The policy entry that sent the request to review. Its JSON form is
/// `{"decision": "ask", "rule": <rule>?}`; `decision` is always `ask` (compatibility C69).
struct MatchedPolicy {
  std::optional<std::string> rule;

  friend bool operator==(const MatchedPolicy&, const MatchedPolicy&) = default;
};

/// A request to cross a boundary (compatibility C69). Required fields must be non-blank;
/// optional fields are absent (nullopt) or a string, and an absent field is different from
/// an empty one (both in JSON and in the hash). JSON field names are the camelCase names
/// given beside each member.
struct BoundaryRequest {
  std::string id;                      ///< `id`, e.g. `sandbox-runtime-network-<uuid>`; not hashed.
  std::string source;                  ///< `source`, e.g. `sandbox-runtime`.
  Surface surface = Surface::Network;  ///< `surface`.
  std::string operation;               ///< `operation`, e.g. `connect`, `execute-host`.
  std::string cwd;                     ///< `cwd`: the working directory of the command.
  std::optional<std::string> command;  ///< `command`: the full shell command.
  std::optional<std::string> path;     ///< `path`: the path as requested.
  std::optional<std::string> resolved_path;       ///< `resolvedPath`.
  std::optional<std::string> destination;         ///< `destination`: `<host>:<port>`.
  std::optional<std::string> tool_call_id;        ///< `toolCallId`.
  std::optional<std::string> tool_name;           ///< `toolName`.
  std::optional<std::string> skill_name;          ///< `skillName`.
  std::optional<std::string> tool_input_preview;  ///< `toolInputPreview`.
  std::optional<std::string> agent_name;          ///< `agentName`; absent for the main agent.
  std::optional<MatchedPolicy> matched_policy;    ///< `matchedPolicy`.

  friend bool operator==(const BoundaryRequest&, const BoundaryRequest&) = default;
};

/// Checks the required fields, in the order `id source surface operation cwd`: each must
/// contain a non-whitespace character, else the error is
/// `boundary request <name> must be a non-empty string` (compatibility C69). Every string
/// field (required or optional) must also be valid UTF-8, else
/// `boundary request <name> must be valid UTF-8` — this keeps the canonical JSON, and so
/// the hash, one-to-one with the request.
[[nodiscard]] core::Result<void> validate(const BoundaryRequest& request);

/// The JSON object of a request: camelCase keys, absent optional fields left out, `id`
/// included. The strings are copied byte for byte; dump the value with
/// `nlohmann::json::error_handler_t::replace` unless the request passed validate().
[[nodiscard]] nlohmann::json to_json(const BoundaryRequest& request);

/// Reads a request from a JSON value and validates it. Errors (message only):
///   `boundary request must be a JSON object`,
///   `boundary request has unknown field "<key>"` (strict: a field this program does not
///   hash must not be silently dropped from the grant's binding),
///   `boundary request <name> must be a non-empty string` (missing, blank or not a string),
///   `boundary request <name> must be a string` (optional field present but not a string;
///   JSON null is not accepted as "absent"),
///   `boundary request surface must be one of network, host-ipc, filesystem-read,
///   filesystem-write, credential`,
///   `boundary request matchedPolicy must be {"decision": "ask", "rule"?: string}`.
[[nodiscard]] core::Result<BoundaryRequest> from_json(const nlohmann::json& value);

/// Parses JSON text (one value, surrounding whitespace allowed) into a request, as
/// from_json(). A syntax error gives `boundary request is not valid JSON: <parser message>`.
[[nodiscard]] core::Result<BoundaryRequest> parse_boundary_request(std::string_view text);

/// The canonical JSON the hash is taken over (compatibility C73): every field but `id`,
/// absent fields dropped, object keys sorted (recursively), compact (no whitespace), strings
/// escaped as JSON.stringify does, non-ASCII kept as UTF-8. Example:
/// `{"cwd":"/w","destination":"example.com:443","operation":"connect",`
/// `"source":"sandbox-runtime","surface":"network"}`.
[[nodiscard]] std::string canonical_json(const BoundaryRequest& request);

/// Lowercase hex SHA-256 (64 characters) of canonical_json(request), computed with OpenSSL
/// EVP. Error only if OpenSSL fails (`EVP_Digest(SHA-256) failed`).
[[nodiscard]] core::Result<std::string> request_hash(const BoundaryRequest& request);

}  // namespace pisandbox::approval
