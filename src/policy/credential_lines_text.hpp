// pisandbox::policy::config_text — the text helpers that every reader of a mixed tool
// configuration shares (policy/credential_lines.hpp): lines, case, URL user information, and
// the masked result. Internal to the credential_lines library; not a public interface.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "policy/credential_lines.hpp"

namespace pisandbox::policy::config_text {

/// One line of a file: its text and what ended it (`\n`, `\r\n`, `\r` or nothing at the end).
struct Line {
  std::string_view text;
  std::string_view end;
  std::size_t number = 0;  ///< 1-based
  std::size_t offset = 0;  ///< of text in the file, in bytes
};

/// `bytes` cut into lines; the views point into `bytes`.
std::vector<Line> split_lines(std::string_view bytes);

/// `text` with ASCII letters lowercased.
std::string lower(std::string_view text);

/// Space or tab, form feed, vertical tab (not a line end).
bool is_space(char c);

/// `text` without leading and trailing is_space() characters.
std::string_view trim(std::string_view text);

/// The number of leading is_space() characters of `text`.
std::size_t indentation(std::string_view text);

/// A key as `policy` may print it: printable ASCII, cut at kMaxShownKeyBytes bytes.
std::string shown(std::string_view key);

/// `text` lowercased with the escapes YAML, TOML and JSON share (`\xXX`, `\uXXXX`,
/// `\UXXXXXXXX`) decoded where they stand for ASCII, so that an escaped key is seen by its
/// name.
std::string decoded_lower(std::string_view text);

/// Removes the user information (`user:password@`, `token@`) of every URL written plainly in
/// `text` (RFC 3986, section 3.2.1: the authority ends at `/`, `?`, `#`; a quote, `<` or
/// whitespace ends it too in a configuration file). True when something was removed.
bool strip_userinfo(std::string& text);

/// How a removed `user:password@` is named: by the option it was in (`key`, may be empty),
/// never by its value.
std::string userinfo_key(std::string_view key);

/// `bytes` with the user information of every URL removed, line by line, each removal added to
/// `removed` (line numbers stay those of `bytes`).
std::string strip_userinfo_lines(std::string_view bytes, std::vector<RemovedItem>& removed);

/// The result for a file shown empty as a whole, with `reason` (one line, no value of the file).
SanitizedConfig masked(std::string reason);

/// `result` with the URL removals made before it (`userinfo`), in line order.
SanitizedConfig with_userinfo(SanitizedConfig result, const std::vector<RemovedItem>& userinfo);

/// Maven's settings.xml without its password, passphrase, privateKey and httpHeaders elements
/// (https://maven.apache.org/settings.html#servers); masked when not read with certainty.
SanitizedConfig sanitize_maven(std::string_view bytes);

/// The Docker CLI's config.json with the values of auth, identitytoken, registrytoken and
/// password emptied (docker-config-json(5)); masked when it is not valid JSON.
SanitizedConfig sanitize_docker(std::string_view bytes);

/// A git configuration file (git-config(1), "CONFIGURATION FILE") without `http.extraHeader` of
/// any subsection, the entries whose variable holds `pass`, `token`, `secret` or `auth`, a
/// proxy with a user information, and the secret user information of every URL in a value or
/// a subsection name (`[url "https://u:TOKEN@host/"]`; an ssh URL keeps its login name). Read
/// with the git configuration guard's parser (policy/git_config_guard.hpp); masked when git
/// would refuse the file or when the copy could still hold a credential (a quoted or escaped
/// URL).
SanitizedConfig sanitize_git_config(std::string_view bytes);

}  // namespace pisandbox::policy::config_text
