// pisandbox::sandbox::macos — the Seatbelt profile (SBPL) of a SandboxPolicy (pure; built on
// every platform, so that it is printed by `pi-sandbox policy --platform macos` and tested where
// it cannot run: planned as a value, then applied).
//
// The profile denies by default and then allows, in this order: processes and signals within
// the sandbox, the mach services and sysctls common tools need, the terminal and device files,
// reads everywhere but the hidden home (with its re-exposed paths), writes to the workspace
// (and the policy's other writable paths), the command's private temporary directory and its
// throw-away home layer; then it denies write, unlink and rename of every protected path and of
// its ancestors, and the protected *names* as regular expressions, so that a name created later
// is refused too; last, the network: only the command's proxy
// ports on loopback, and the Unix sockets the Linux policy allows without asking. Seatbelt
// decides by the last rule that matches (docs/macos.md, "The profile"), which is why the order
// above is the order of the profile. docs/macos.md says what differs from the Linux sandbox.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/sandbox_policy.hpp"

namespace pisandbox::sandbox::macos {

namespace fs = std::filesystem;

/// `text` as an SBPL (TinyScheme) string literal, quotes included: `"` and `\` are escaped with
/// a backslash, newline, tab and carriage return as `\n`, `\t`, `\r`, every other control byte
/// (below 0x20, and 0x7f) as `\xHH` (two lower-case hex digits); every other byte, UTF-8
/// included, is kept as it is. Reading the literal back gives exactly `text`.
[[nodiscard]] std::string sbpl_string(std::string_view text);

/// A regular expression (POSIX extended, as Seatbelt's `regex` filter reads it) that matches
/// exactly `text`: each of `\ ^ . [ $ ( ) | * + ? {` is preceded by a backslash, every other byte
/// is kept (`]` and `}` are ordinary outside a bracket expression).
[[nodiscard]] std::string regex_literal(std::string_view text);

/// As regex_literal(), with each ASCII letter replaced by a bracket expression of both cases
/// (`a` -> `[aA]`): macOS file systems are case-insensitive by default, so `.BASHRC` names the
/// same file as `.bashrc`.
[[nodiscard]] std::string regex_literal_any_case(std::string_view text);

/// Whether a rule allows or denies what it matches.
enum class Verdict { Allow, Deny };

/// How a filter's argument is written.
enum class Argument {
  String,  ///< an SBPL string literal (sbpl_string())
  Symbol,  ///< a bare symbol (`same-sandbox`)
  None,    ///< no argument: `(head)`
};

/// One filter of a rule: `(head argument)`, or `(wrapper (head argument))` when `wrapper` is set
/// (`(remote unix-socket (path-literal "/p"))` has wrapper `remote unix-socket`).
///   head: `literal`, `subpath`, `regex`, `global-name`, `sysctl-name`, `remote ip`, ...
///   value: the argument's text, unescaped (a path, a regular expression, a name).
struct Filter {
  std::string head;
  std::string value;
  Argument argument = Argument::String;
  std::string wrapper = {};

  friend bool operator==(const Filter&, const Filter&) = default;
};

/// One rule: `(allow|deny operation... filter...)`. The filters are alternatives (any one
/// matches); no filter matches everything. `why` becomes a comment line above the rule; it is
/// fixed text, never a path (a path may hold a newline).
struct Rule {
  Verdict verdict;
  std::vector<std::string> operations;
  std::vector<Filter> filters = {};
  std::string why = {};

  friend bool operator==(const Rule&, const Rule&) = default;
};

/// What the profile needs besides the policy: the per-command facts the applier makes.
///   temp_dir:   the command's private temporary directory (TMPDIR inside), absolute and real
///               (on macOS under `/private/var/folders/...`: Seatbelt matches resolved paths).
///   home_layer: the command's throw-away home layer (HOME inside when the home is hidden),
///               absolute and real; removed after the command.
///   http_port, socks_port: the command's proxy ports on 127.0.0.1 of the host (1-65535).
///   allowed_sockets: hostIPC.allowedSockets, expanded (policy/host_sockets.hpp), absolute.
struct SeatbeltInputs {
  fs::path temp_dir;
  fs::path home_layer;
  std::uint16_t http_port = 3128;
  std::uint16_t socks_port = 1080;
  std::vector<fs::path> allowed_sockets = {};
};

/// The example inputs `pi-sandbox policy --platform macos` shows the profile with (the real ones
/// exist only while a command runs): the ports 3128 and 1080 and two directories named
/// `/private/var/folders/pi-sandbox/{tmp,home}`.
SeatbeltInputs example_inputs();

/// The profile, as rules in the order Seatbelt evaluates them (the last match decides).
struct SeatbeltProfile {
  std::vector<Rule> rules;

  friend bool operator==(const SeatbeltProfile&, const SeatbeltProfile&) = default;
};

/// Whether an absolute host path exists (lstat(2) succeeds); the real one is host_path_exists().
using PathExists = std::function<bool(const fs::path&)>;

/// lstat(2) of `path` succeeds.
bool host_path_exists(const fs::path& path);

/// Builds the profile for `policy`; `protected_paths` are the policy's own plus the scan's
/// (policy/protected_scan.hpp), as sandbox/linux's prepare_sandbox() combines them. A protected
/// path that the Linux sandbox protects only while it exists (a secret with the guard, a file
/// of the hidden home) is in the profile only when `exists` says so. Paths are used as given
/// (absolute, lexically normal; the applier passes real paths). Pure given `exists`; never fails.
SeatbeltProfile plan_seatbelt(const policy::SandboxPolicy& policy,
                              const std::vector<policy::ProtectedPath>& protected_paths,
                              const SeatbeltInputs& inputs, const PathExists& exists);

/// The profile's text for `sandbox-exec -p`: `(version 1)`, `(deny default)`, then one rule per
/// Rule with its comment, each ending in a newline.
std::string render(const SeatbeltProfile& profile);

}  // namespace pisandbox::sandbox::macos
