// The copy of a git configuration file without its credentials (docs/security.md, "Tool
// configuration without its credentials"), read with the git configuration guard's parser
// (policy/git_config_guard.hpp, a port of git's config.c).
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/credential_lines_text.hpp"
#include "policy/git_config_guard.hpp"

namespace pisandbox::policy::config_text {

namespace {

/// Where the user information of a URL in a git configuration text stands, and what of it is a
/// secret: [begin, end) are the bytes to remove.
struct UserinfoSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// Whether `scheme` is one whose user name is a login, not a secret (git-config(1) and
/// git-clone(1), "GIT URLS": `ssh://git@host/` names the account ssh logs in as).
bool ssh_scheme(std::string_view scheme) {
  const std::string s = lower(scheme);
  return s == "ssh" || s == "git+ssh" || s == "ssh+git";
}

/// The secret part of the user information of the URL whose `://` is at `sep` in `text`, if
/// any. The authority ends at `/`, `?`, `#` or whitespace (RFC 3986, section 3.2); `strict`
/// lets a quote, `<`, `>` or `\` end it too (as strip_userinfo() reads a configuration file);
/// not strict, they belong to it, so that an escaped or quoted form still counts. The password
/// (after the first `:`) is always a secret; a user name alone is one except for ssh, where it
/// is the login (`ssh://git@host/`).
std::optional<UserinfoSpan> secret_userinfo(std::string_view text, std::size_t sep, bool strict) {
  const std::size_t start = sep + 3;
  const std::string_view stops = strict ? "/?#\"'<> \t\\\n\r" : "/?#\t \n\r";
  std::size_t stop = start;
  while (stop < text.size() && stops.find(text[stop]) == std::string_view::npos) ++stop;
  const std::size_t at = text.substr(start, stop - start).rfind('@');
  if (at == std::string_view::npos) return std::nullopt;
  const std::string_view userinfo = text.substr(start, at);
  // The scheme's letters, `+` and `-` (a `.` ends it here: a key reads `url.ssh://...`).
  std::size_t scheme_begin = sep;
  while (scheme_begin > 0 && (std::isalnum(static_cast<unsigned char>(text[scheme_begin - 1])) ||
                              text[scheme_begin - 1] == '+' || text[scheme_begin - 1] == '-'))
    --scheme_begin;
  if (ssh_scheme(text.substr(scheme_begin, sep - scheme_begin))) {
    const std::size_t colon = userinfo.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    return UserinfoSpan{start + colon, start + at};
  }
  return UserinfoSpan{start, start + at + 1};
}

/// Removes the secret user information of every URL written plainly in `text`; true when some
/// was removed.
bool strip_git_userinfo(std::string& text) {
  bool changed = false;
  for (std::size_t sep = text.find("://"); sep != std::string::npos;
       sep = text.find("://", sep + 3)) {
    if (const auto span = secret_userinfo(text, sep, true)) {
      text.erase(span->begin, span->end - span->begin);
      changed = true;
    }
  }
  return changed;
}

/// Whether `text` still holds user information that is a secret in any form (quoted, escaped).
bool holds_userinfo(std::string_view text) {
  for (std::size_t sep = text.find("://"); sep != std::string_view::npos;
       sep = text.find("://", sep + 3))
    if (secret_userinfo(text, sep, false)) return true;
  return false;
}

/// The variable of a canonical key (`http.https://h/.extraheader` -> `extraheader`).
std::string_view variable_of(std::string_view key) {
  const std::size_t dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

/// The section of a canonical key (`http.https://h/.extraheader` -> `http`).
std::string_view section_of(std::string_view key) {
  return key.substr(0, key.find('.'));
}

/// Why an entry is a credential, or empty: `http.extraHeader` of any subsection (a header sent
/// with every request, `Authorization: Bearer ...`), a variable whose name holds `pass`,
/// `token`, `secret` or `auth` (`sendemail.smtpPass`, `github.token`, `hub.oauthtoken`,
/// `credential.<url>.password`), and a proxy whose value keeps a user information this reader
/// did not remove (`http.proxy = u:pw@proxy:3128`, git-config(1) `http.proxy`:
/// `[protocol://][user[:password]@]proxyhost[:port]`), and `credential.helper` of any URL
/// (gitcredentials(7), "Custom Helpers": a `!` helper is a shell snippet, where a password is
/// written inline as `!f() { echo password=...; }; f`, and a helper's arguments can name one).
bool credential_entry(const GitConfigFinding& entry) {
  const std::string_view variable = variable_of(entry.key);
  if (section_of(entry.key) == "http" && variable == "extraheader") return true;
  if (section_of(entry.key) == "credential" && variable == "helper") return true;
  for (const std::string_view word : {"pass", "token", "secret", "auth"})
    if (variable.find(word) != std::string_view::npos) return true;
  return variable == "proxy" && entry.value.find('@') != std::string::npos;
}

/// What still makes `copy` unsafe to show, or empty: git would not read it, an entry that is a
/// credential, or user information in a key (a subsection) or a value or on any line.
std::string left_in_copy(std::string_view copy) {
  const GitConfigScan scan = read_git_config(copy);
  if (scan.malformed) return "the copy does not parse: " + scan.malformed_reason;
  for (const auto& entry : scan.findings) {
    if (credential_entry(entry)) return shown(entry.key) + " is left in the copy";
    if (holds_userinfo(entry.key) || holds_userinfo(entry.value))
      return "a URL's user information written in a form this reader does not take apart "
             "(quoted or escaped), in " +
             shown(entry.key);
  }
  for (const auto& line : split_lines(copy))
    if (holds_userinfo(line.text))
      return "a URL's user information written in a form this reader does not take apart "
             "(quoted or escaped), line " +
             std::to_string(line.number);
  return {};
}

}  // namespace

SanitizedConfig sanitize_git_config(std::string_view bytes) {
  // First the URLs' user information, line by line (the lines stay where they are, so the
  // entries found next keep the file's line numbers); then the credential entries.
  SanitizedConfig out;
  std::string text;
  for (const auto& line : split_lines(bytes)) {
    std::string kept(line.text);
    if (strip_git_userinfo(kept)) out.removed.push_back({line.number, userinfo_key("")});
    text += kept;
    text += line.end;
  }
  const GitConfigScan scan = read_git_config(text);
  if (scan.malformed) return masked("git would not read it: " + scan.malformed_reason);
  std::vector<GitConfigFinding> removed;
  for (const auto& entry : scan.findings)
    if (credential_entry(entry)) {
      removed.push_back(entry);
      out.removed.push_back({entry.first_line + 1, shown(entry.key)});
    }
  out.bytes = without_entries(text, removed);
  std::ranges::stable_sort(out.removed, {}, &RemovedItem::line);
  if (std::string why = left_in_copy(out.bytes); !why.empty()) return masked(std::move(why));
  return out;
}

}  // namespace pisandbox::policy::config_text
