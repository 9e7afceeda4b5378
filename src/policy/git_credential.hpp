// pisandbox::policy — the lines of git's credential helper protocol, read and written, for
// `pi-sandbox credential-helper` inside the sandbox and the host side that answers it
// (docs/network.md, "Credentials for HTTPS").
//
// Source: git-credential(1), "INPUT/OUTPUT FORMAT": attributes one per line as `key=value`,
// ended by a blank line or the end of the input; a key holds no `=`, and neither part holds a
// newline or a NUL byte; a key given twice keeps its last value, except keys ending in `[]`,
// which collect every value (and an empty one clears them). Everything read here comes from
// across the sandbox's boundary (the command's git, or the host's helper), so it is untrusted
// input: bounded, and fuzzed (tests/fuzz/git_credential_fuzz.cpp).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace pisandbox::policy {

/// Most bytes of one message of the protocol (git's own messages are a few hundred bytes).
inline constexpr std::size_t kMaxCredentialMessageBytes = 64 * 1024;
/// Most attributes of one message.
inline constexpr std::size_t kMaxCredentialAttributes = 256;

/// One `key=value` line.
struct CredentialAttribute {
  std::string key;
  std::string value;
  friend bool operator==(const CredentialAttribute&, const CredentialAttribute&) = default;
};

/// Parses one message: the attributes in order, up to the first blank line (what follows it is
/// ignored, as git ignores it) or the end of `text`. A last line without its newline counts.
/// Errors (message only): `credential message is larger than 65536 bytes`, `credential message
/// has more than 256 attributes`, `credential line <n> holds a NUL byte`, `credential line <n>
/// has no '='` and `credential line <n> has an empty key` (n counts from 1).
[[nodiscard]] core::Result<std::vector<CredentialAttribute>> parse_credential_message(
    std::string_view text);

/// The last value of `key` in `attributes` (git-credential(1): a later line replaces an earlier
/// one), nullopt when there is none.
[[nodiscard]] std::optional<std::string> credential_value(
    const std::vector<CredentialAttribute>& attributes, std::string_view key);

/// What a credential is asked for: git-credential(1)'s `protocol`, `host` (a name, possibly
/// with `:port`), `path` (only with credential.useHttpPath) and `username` (when the URL or the
/// configuration names one). Nothing else of the command's message crosses the boundary.
struct CredentialQuery {
  std::string protocol;
  std::string host;
  std::optional<std::string> path;
  std::optional<std::string> username;
  friend bool operator==(const CredentialQuery&, const CredentialQuery&) = default;
};

/// The query of a parsed message. Errors (message only): `credential request has no protocol`,
/// `credential request has no host`, `credential request protocol <p> is not a URL scheme`
/// (RFC 3986 section 3.1: a letter, then letters, digits, `+`, `-`, `.`), `credential request
/// host <h> is not a host name` (only letters, digits, `-`, `.`, `_`, and one `:port` of 1 to 5
/// digits), `credential request <key> holds a control character` for a `path` or `username`
/// with a byte below 0x20 or 0x7f: a carriage return ends a line for some helpers, which would
/// read what follows it as another attribute (`host=`), git's `credential.protectProtocol`
/// guards only since git 2.39.5 and 2.48 (git-config(1)).
[[nodiscard]] core::Result<CredentialQuery> credential_query(
    const std::vector<CredentialAttribute>& attributes);

/// The message of `query` as git reads it on a helper's stdin: `protocol=`, `host=`, then
/// `path=` and `username=` when present, each ending in `\n`, and the blank line that ends it.
[[nodiscard]] std::string credential_message(const CredentialQuery& query);

/// A username and its password.
struct Credential {
  std::string username;
  std::string password;
  friend bool operator==(const Credential&, const Credential&) = default;
};

/// The credential of a helper's answer, or nullopt when it has no `username` or no `password`,
/// or when its `protocol` or `host` (when present) differ from `query`'s: an answer for another
/// destination is never taken for this one.
[[nodiscard]] std::optional<Credential> credential_answer(
    const std::vector<CredentialAttribute>& attributes, const CredentialQuery& query);

/// `username=<u>\npassword=<p>\n`: the only lines a helper inside is given.
[[nodiscard]] std::string credential_lines(const Credential& credential);

/// One record of `git config --list --show-origin -z`: its origin (`file:<path>`, `command
/// line:`...), its key (section and name lowercased, a subsection as written), and its value
/// (nullopt for a key written without `=`, git's boolean true).
struct GitConfigEntry {
  std::string origin;
  std::string key;
  std::optional<std::string> value;
};

/// The records of `git config --list --show-origin --includes -z` (git-config(1), OPTIONS:
/// `<origin>\0<key>\n<value>\0`, or `<origin>\0<key>\0` without a value). Error: a record
/// without its NUL, `git config listing is malformed`.
[[nodiscard]] core::Result<std::vector<GitConfigEntry>> git_config_entries(
    std::string_view listing);

/// The non-empty values of every `credential.helper` and `credential.<url>.helper`, in order:
/// each is a program git runs (git-credential(1), "CUSTOM HELPERS"; gitcredentials(7)).
[[nodiscard]] std::vector<std::string> credential_helpers(
    const std::vector<GitConfigEntry>& entries);

/// The files git's configuration comes from, read from the output of `git config --list
/// --show-origin --includes -z` (git-config(1), OPTIONS: records `<origin>\0<key>\n<value>\0`):
/// every `file:` origin, and the target of every `include.path` and `includeIf.<cond>.path`
/// whatever its condition (git-config(1), "Includes": `~/` is `home`, a relative path is from
/// the directory of the file that names it), since a target that does not exist yet is no
/// origin but is read once it does. Paths are lexically normal, not resolved. Error: a record
/// without its NUL or newline, or an include target `~user/...` (another user's home),
/// `git config listing is malformed` / `include path <p> names another user's home`.
[[nodiscard]] core::Result<std::vector<std::filesystem::path>> git_config_files(
    std::string_view listing, const std::filesystem::path& home);

}  // namespace pisandbox::policy
