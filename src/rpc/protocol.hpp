// pisandbox::rpc — the JSON-lines protocol of `pi-sandbox serve` (docs/protocol.md): request
// parsing, event building, line splitting and UTF-8 framing of output. Pure: no system calls.
//
// Source: docs/protocol.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base64.hpp"

namespace pisandbox::rpc {

/// The protocol version exchanged in `hello` (docs/protocol.md).
inline constexpr int kProtocolVersion = 1;

/// The longest request line accepted, in bytes (16 MiB; docs/protocol.md).
inline constexpr std::size_t kMaxLineBytes = 16 * 1024 * 1024;

struct Hello {
  long long version = 0;
};

/// `exec`: one command. `command` XOR `argv`; `env` absent means serve's own environment.
///   timeout_s: seconds (> 0), absent for none. stdin_pipe: `stdin: "pipe"`.
///   env_keep: exact variable names (ASCII letters, digits, `_`) that the credential filter of
///   docs/security.md "Environment" keeps for this command although a default rule would
///   remove them, as an `environment.passThrough` entry would (`environment.remove` still
///   wins): what the host deliberately gives the command, e.g. a subagent's model API key
///   (docs/protocol.md, "Requests", `env_keep`). Duplicates removed, first kept.
///   approval_command: the command as its approval requests name it (`command` of a
///   BoundaryRequest; integrations/pi/README.md, "Subagents": `process-backed subagent:
///   <task>`); absent: the command, or the
///   argv joined.
///   stderr_to_stdout: `stderr: "stdout"` (default `"separate"`): the command's stderr is its
///     stdout pipe, so its output events keep the order it wrote them (docs/protocol.md,
///     "Events", `output`).
struct Exec {
  std::string id;
  std::optional<std::string> command;
  std::vector<std::string> argv;
  std::string cwd;
  std::optional<std::map<std::string, std::string>> env;
  std::optional<double> timeout_s;
  std::optional<std::string> scope_key;
  std::optional<std::string> agent_name;
  bool stdin_pipe = false;
  std::vector<std::string> env_keep;
  std::optional<std::string> approval_command;
  bool stderr_to_stdout = false;
};

/// `stdin`: bytes for the command's stdin (decoded from base64 when so encoded).
struct StdinData {
  std::string id;
  std::string data;
};
struct StdinClose {
  std::string id;
};
struct Abort {
  std::string id;
};

/// The host's answer to an approval request (docs/approvals.md, "The question and its
/// answers": Deny first, as the host shows them).
enum class Choice { Deny, AllowOnce, AllowCommand, AllowSession };

/// `deny`, `allow-once`, `allow-command` or `allow-session`.
[[nodiscard]] std::string_view to_string(Choice choice);

/// The longest `reason` an `approval_response` may carry, in bytes.
inline constexpr std::size_t kMaxReasonBytes = 4096;

/// `approval_response`: the host's answer to one `approval_request`.
///   source: who decided, as the host knows it: `human`, `reviewer`, `unavailable`,
///           `hard-deny` or `invalid-grant` (an allow only `human` or `reviewer`); absent
///           means `human`.
///   reason: why, for the command's output, the `denied` event and the audit line; absent
///           means serve's default for the choice and source.
struct ApprovalResponse {
  std::string id;
  std::string request_id;
  Choice choice = Choice::Deny;
  std::optional<std::string> source;
  std::optional<std::string> reason;
};
struct Shutdown {};

/// `recent_denials`: the host asks which automatic denials of the session the user may
/// override now (docs/approvals.md, "After a wrong denial"); answered by a `recent_denials`
/// event.
struct RecentDenials {};

/// `override`: the user authorises one retry (`kind` `retry`) or one break-glass allow
/// (`break-glass`) of the recent denial with `request_hash`, usable within 60 s by a request
/// of `scope_key` (absent: any scope of the session). Answered by an `override` event, or an
/// `error` event saying why not.
struct Override {
  std::string request_hash;
  std::string kind;
  std::optional<std::string> scope_key;
};

using Request = std::variant<Hello, Exec, StdinData, StdinClose, Abort, ApprovalResponse, Shutdown,
                             RecentDenials, Override>;

/// Why a line is not a request: the `error` event's message and, when known, the id.
struct RequestError {
  std::string message;
  std::optional<std::string> id;
};

/// Parses one request line (without its LF; a trailing CR is ignored). Errors, exactly:
///   `line is not valid JSON: <parser message>`, `request must be a JSON object`,
///   `request has no string "type"`, `unknown request type "<type>"`,
///   `<type> needs a string "<field>"` (missing, empty or not a string id/request_id/cwd),
///   `exec "<id>": needs "command" or "argv", not both`, `exec "<id>": "argv" must be a
///   non-empty array of strings`, `exec "<id>": "cwd" must be an absolute path`,
///   `exec "<id>": "env" must be an object of strings` (names without `=`, no NUL anywhere), `exec
///   "<id>": "timeout_s" must be a positive number of seconds, at most 1000000000`, `exec "<id>":
///   "stdin" must be "closed" or "pipe"`, `exec "<id>": "<field>" must be a string`, `hello needs
///   an integer "version"`, `stdin "<id>": "data" must be a string`, `stdin "<id>": "data" is not
///   valid base64`, `approval_response "<id>": "choice" must be "deny", "allow-once",
///   "allow-command" or "allow-session"`, `approval_response "<id>": "source" must be one of
///   "human", "reviewer", "unavailable", "hard-deny", "invalid-grant"`, `approval_response
///   "<id>": "source" must be "human" or "reviewer" for an allow`, `approval_response "<id>":
///   "reason" must be a string of at most 4096 bytes`, `override needs a string
///   "request_hash"`, `override: "kind" must be "retry" or "break-glass"`, `override:
///   "scope_key" must be a string`.
[[nodiscard]] std::expected<Request, RequestError> parse_request(std::string_view line);

/// The JSON of an exec request as serve hands it to its worker (round-trips parse_request).
[[nodiscard]] std::string exec_line(const Exec& exec);

/// Events, each one compact JSON object ending in "\n" (docs/protocol.md "Events").
///   hello_event: `server` names the program (`pi-sandbox 0.2.0`), `sandbox` the sandbox that runs
///   the commands (`linux`; `macos` for the Seatbelt backend, docs/macos.md).
[[nodiscard]] std::string hello_event(std::string_view server, std::string_view sandbox);
[[nodiscard]] std::string started_event(std::string_view id);

/// One entry of a `recent_denials` event: `recovery` is `retry` or `break-glass`.
struct DenialEntry {
  std::string request_hash;
  std::string recovery;
  std::string surface;
  std::string target;
  std::string reason;
  std::string command = {};  ///< left out of the event when empty
};
/// `{"type":"recent_denials","denials":[{request_hash, recovery, surface, target, reason,
/// command?}]}`, newest first.
[[nodiscard]] std::string recent_denials_event(const std::vector<DenialEntry>& denials);
/// `{"type":"override","request_hash":…,"kind":…,"expires_in_s":…}`.
[[nodiscard]] std::string override_event(std::string_view request_hash, std::string_view kind,
                                         long long expires_in_s);
/// `data` as UTF-8 text when `bytes` is valid UTF-8, else base64 with `encoding`.
[[nodiscard]] std::string output_event(std::string_view id, bool stderr_stream,
                                       std::string_view bytes);
/// `denied`: one refused crossing (docs/protocol.md, "Events"). `source`: who refused;
/// `recovery`: `retry` or `break-glass`, how the user may override an automatic denial (left
/// out when empty: no override).
[[nodiscard]] std::string denied_event(std::string_view id, std::string_view surface,
                                       std::string_view target, std::string_view reason,
                                       std::string_view source, std::string_view recovery = {});
/// `approval_settled`: serve closed the open question `request_id` of command `id` without the
/// host's answer (another answer covered it, its deadline passed, the command ended). `reason`
/// is left out when empty.
[[nodiscard]] std::string approval_settled_event(std::string_view id, std::string_view request_id,
                                                 Choice choice, std::string_view source,
                                                 std::string_view reason);
/// How a command ended.
struct ExitStatus {
  std::optional<int> exit_code;
  std::optional<int> signal;
  std::string error;  ///< `timeout`, `aborted`, `launch_failed`, or empty
  std::string message;
  std::string limit;  ///< the resource limit the command reached: `memory`, `pids`, or empty
};
[[nodiscard]] std::string exit_event(std::string_view id, const ExitStatus& status);
[[nodiscard]] std::string error_event(std::string_view message,
                                      const std::optional<std::string>& id = std::nullopt);

/// Whether `bytes` is valid UTF-8 (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF).
[[nodiscard]] bool is_utf8(std::string_view bytes);

/// How many bytes at the end of `bytes` are the start of a UTF-8 character that is not
/// complete yet (0-3): output holds them back until the next read completes them.
[[nodiscard]] std::size_t incomplete_utf8_tail(std::string_view bytes);

/// Base64 of the `data` fields (RFC 4648 §4, with padding): core::base64_encode and
/// core::base64_decode (src/core/base64.hpp).
using core::base64_decode;
using core::base64_encode;

/// Splits a byte stream into lines on LF, dropping one CR before each LF.
class LineSplitter {
 public:
  /// Appends `bytes`; complete lines go to `lines`. Returns false once a line has grown
  /// past kMaxLineBytes without an LF (that line is dropped up to its LF).
  bool feed(std::string_view bytes, std::vector<std::string>& lines);
  /// What is left without a final LF (the last line of a stream).
  [[nodiscard]] std::string take_rest();

 private:
  std::string pending_;
  bool overflowing_ = false;
};

}  // namespace pisandbox::rpc
