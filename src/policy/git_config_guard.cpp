// The git configuration guard's parser (policy/git_config_guard.hpp): a port of git's config.c
// that finds the entries off the allowlist (git_config_rules.cpp) in a configuration text,
// compares two scans, and writes a copy without the findings.
#include "policy/git_config_guard.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "core/ascii.hpp"

namespace pisandbox::policy {

namespace {

using Condition = GitValueCondition;

const std::vector<GitConfigRule>& rules_of(GitConfigFile file) {
  return file == GitConfigFile::Gitmodules ? allowed_gitmodules_rules()
                                           : allowed_git_config_rules();
}

/// git's isspace (ctype.c sane_ctype): space, tab, LF, CR; not FF nor VT.
constexpr bool is_git_space(int c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
constexpr bool is_alpha(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
/// config.c iskeychar(): a character of a section or variable name.
constexpr bool is_key_char(int c) {
  return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::ranges::equal(a, b, [](char x, char y) {
           return core::to_lower(x) == core::to_lower(y);
         });
}

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         equals_ignoring_case(text.substr(0, prefix.size()), prefix);
}

/// git_parse_maybe_bool(): true, yes, on, false, no, off (any case), empty (false), a decimal
/// integer (nonzero is true), the implicit true; nullopt for anything else. git also takes
/// octal, hexadecimal and unit suffixes (strtoimax base 0, k/m/g): those are not booleans
/// here, which allows less, never more.
std::optional<bool> git_boolean(std::string_view value, bool implicit) {
  if (implicit) return true;
  if (value.empty()) return false;
  for (std::string_view word : {"true", "yes", "on"})
    if (equals_ignoring_case(value, word)) return true;
  for (std::string_view word : {"false", "no", "off"})
    if (equals_ignoring_case(value, word)) return false;
  std::string_view digits = value;
  if (digits.front() == '-' || digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty() || !std::ranges::all_of(digits, core::is_digit)) return std::nullopt;
  return !std::ranges::all_of(digits, [](char c) { return c == '0'; });
}

/// git_parse_int() as far as the allowlist needs: decimal digits, an optional sign, an
/// optional unit k, m or g (any case).
bool is_git_integer(std::string_view value) {
  if (!value.empty() && (value.front() == '-' || value.front() == '+')) value.remove_prefix(1);
  if (!value.empty() && std::string_view("kKmMgG").find(value.back()) != std::string_view::npos)
    value.remove_suffix(1);
  return !value.empty() && std::ranges::all_of(value, core::is_digit);
}

std::string_view trim_leading_space(std::string_view text) {
  while (!text.empty() && is_git_space(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  return text;
}

/// A URL of the ext:: or fd:: transport: transport_get() takes `<transport>::<address>` as a
/// remote helper, git's built-in remote-ext runs its address as a command
/// (git-remote-ext(1)), remote-fd talks to inherited descriptors (git-remote-fd(1)). Compared
/// case-insensitively (git compares exactly: this refuses more).
bool is_command_transport(std::string_view url) {
  url = trim_leading_space(url);
  return starts_with_ignoring_case(url, "ext::") || starts_with_ignoring_case(url, "fd::");
}

/// A key split as config.c parse_config_key() does: the section before the first dot, the
/// variable after the last, the subsection between (which may hold dots, and be empty).
struct KeyParts {
  std::string_view section;
  std::string_view subsection;
  bool has_subsection = false;
  std::string_view variable;
};

std::optional<KeyParts> split_key(std::string_view key) {
  const std::size_t first = key.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t last = key.rfind('.');
  KeyParts parts{key.substr(0, first), {}, first != last, key.substr(last + 1)};
  if (parts.has_subsection) parts.subsection = key.substr(first + 1, last - first - 1);
  return parts;
}

/// Subsections are compared exactly, as git compares them (config.c): `[filter "LFS"]` is
/// another driver than `[filter "lfs"]`.
bool subsection_matches(const GitConfigRule& rule, const KeyParts& parts) {
  if (rule.subsection == "?") return true;
  if (rule.subsection.empty()) return !parts.has_subsection;
  if (!parts.has_subsection) return false;
  return rule.subsection == "*" || rule.subsection == parts.subsection;
}

bool key_matches(const GitConfigRule& rule, const KeyParts& parts) {
  return rule.section == parts.section && subsection_matches(rule, parts) &&
         (rule.variable == "*" || rule.variable == parts.variable);
}

bool value_allowed(const GitConfigRule& rule, std::string_view value, bool implicit) {
  switch (rule.condition) {
    case Condition::Any:
      return true;
    case Condition::Boolean:
      return git_boolean(value, implicit).has_value();
    case Condition::Scalar:
      return git_boolean(value, implicit).has_value() || is_git_integer(value);
    case Condition::NotShellCommand:
      return !trim_leading_space(value).starts_with('!');
    case Condition::NotCommandTransport:
      return !implicit && !is_command_transport(value);
    case Condition::Exactly:
      return !implicit && value == rule.exact;
  }
  return false;
}

/// Whether `key` = `value` is on the allowlist; `refused_by` is set to the row whose key
/// matched when its value did not (nullptr when no row names the key).
bool allowed(const std::vector<GitConfigRule>& rules, std::string_view key, std::string_view value,
             bool implicit, const GitConfigRule*& refused_by) {
  refused_by = nullptr;
  const auto parts = split_key(key);
  if (!parts) return false;
  for (const auto& rule : rules) {
    if (!key_matches(rule, *parts)) continue;
    if (value_allowed(rule, value, implicit)) return true;
    if (refused_by == nullptr) refused_by = &rule;
  }
  return false;
}

/// Where an entry off the allowlist lies in the text, in bytes.
///   line_begin: the start of its first line; key_begin: its key's first byte;
///   value_end: the end of its value, before its line end (`\n` or `\r\n`) if any;
///   end: after that line end (or the end of the text).
struct EntrySpan {
  std::size_t line_begin = 0;
  std::size_t key_begin = 0;
  std::size_t value_end = 0;
  std::size_t end = 0;
};

/// What the parser found: the scan, the span of each finding, and where parsing stopped.
struct ParsedConfig {
  GitConfigScan scan;
  std::vector<EntrySpan> spans;  ///< parallel to scan.findings
  std::size_t kept_end = 0;      ///< the text before the line of the failing construct
};

std::size_t line_begin_of(std::string_view text, std::size_t offset) {
  const std::size_t newline = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  return (offset == 0 || newline == std::string_view::npos) ? 0 : newline + 1;
}

/// A port of config.c's parser (git_parse_source, get_next_char, get_base_var,
/// get_extended_base_var, get_value, parse_value) over a string, keeping the entries off the
/// allowlist instead of calling back. One pass, plus for each finding a look back to the start
/// of its own line: linear in the text. Like git's strbuf, the section name stays in one buffer
/// that is cut back to the header for each entry, so a long header costs once, not per entry.
class ConfigParser {
 public:
  ConfigParser(std::string_view text, const std::vector<GitConfigRule>& rules)
      : text_(text), rules_(rules) {
    result_.kept_end = text.size();
  }

  ParsedConfig run() && {
    if (skip_bom()) {
      parse_all();
    } else {
      fail(0, 0, "a partial UTF-8 byte order mark");
    }
    return std::move(result_);
  }

 private:
  /// get_next_char(): the next byte, `\r\n` read as `\n`, and `\n` with at_end_ set at the
  /// end of the text or at a NUL byte (nul_ set: git would cut its C strings there).
  int next() {
    if (at_end_) return '\n';
    if (pos_ == text_.size() || text_[pos_] == '\0') {
      nul_ = pos_ != text_.size();
      at_end_ = true;
      return '\n';
    }
    int c = static_cast<unsigned char>(text_[pos_++]);
    if (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n') c = text_[pos_++];
    if (c == '\n') ++line_;
    return c;
  }

  /// git_parse_source(): a whole UTF-8 BOM at the start is skipped, a partial one refused.
  bool skip_bom() {
    constexpr std::string_view kBom = "\xEF\xBB\xBF";
    if (text_.starts_with(kBom)) {
      pos_ = kBom.size();
      return true;
    }
    return text_.empty() || text_.front() != kBom.front();
  }

  /// Records the failure of the construct that starts at `offset` on 0-based `line`.
  void fail(std::size_t offset, std::size_t line, std::string_view what) {
    result_.scan.malformed = true;
    result_.scan.malformed_reason = "line " + std::to_string(line + 1) + ": " + std::string(what);
    result_.kept_end = line_begin_of(text_, offset);
  }

  /// git_parse_source()'s loop: whitespace, comments, section headers and entries.
  void parse_all() {
    bool comment = false;
    for (;;) {
      const std::size_t construct = pos_;
      const std::size_t construct_line = line_;
      const int c = next();
      if (nul_) return fail(construct, construct_line, "a NUL byte");
      if (c == '\n') {
        if (at_end_) return;
        comment = false;
        continue;
      }
      if (comment || is_git_space(c)) continue;
      if (c == '#' || c == ';') {
        comment = true;
        continue;
      }
      if (c == '[') {
        const char* error = section_header(construct);
        if (error != nullptr) return fail(construct, construct_line, error);
        continue;
      }
      if (!is_alpha(c)) return fail(construct, construct_line, "bad config line");
      const char* error = entry(c, construct, construct_line);
      if (error != nullptr) return fail(construct, construct_line, error);
    }
  }

  /// get_base_var() after the `[` at `open`: key characters and dots, lowercased, then `]`
  /// or a quoted subsection. The error, or nullptr.
  const char* section_header(std::size_t open) {
    name_.clear();
    for (;;) {
      const int c = next();
      if (nul_) return "a NUL byte";
      if (at_end_) return "bad section header";
      if (pos_ - open > kMaxGitSectionHeaderBytes) return "section header too long";
      if (c == ']') break;
      if (is_git_space(c)) {
        const char* error = subsection(c, open);
        if (error != nullptr) return error;
        break;
      }
      if (!is_key_char(c) && c != '.') return "bad section header";
      name_.push_back(core::to_lower(static_cast<char>(c)));
    }
    if (name_.empty()) return "bad section header";
    name_.push_back('.');
    base_length_ = name_.size();
    return nullptr;
  }

  /// get_extended_base_var(): spaces, `"subsection"` (`\x` is `x`; a line end is refused),
  /// `]`. The error, or nullptr.
  const char* subsection(int c, std::size_t open) {
    do {
      if (c == '\n') return nul_ ? "a NUL byte" : "bad section header";
      c = next();
    } while (is_git_space(c));
    if (c != '"') return "bad section header";
    name_.push_back('.');
    for (;;) {
      c = next();
      if (c == '"') break;
      if (c == '\\') c = next();
      if (c == '\n') return nul_ ? "a NUL byte" : "bad section header";
      if (pos_ - open > kMaxGitSectionHeaderBytes) return "section header too long";
      name_.push_back(static_cast<char>(c));
    }
    if (next() != ']') return nul_ ? "a NUL byte" : "bad section header";
    return nullptr;
  }

  /// get_value(): the variable name from its first letter `first`, then nothing (the
  /// implicit true) or `=` and a value; keeps the entry when a rule matches. The error, or
  /// nullptr.
  const char* entry(int first, std::size_t key_begin, std::size_t first_line) {
    name_.resize(base_length_);
    name_.push_back(core::to_lower(static_cast<char>(first)));
    int c = next();
    while (!at_end_ && is_key_char(c)) {
      name_.push_back(core::to_lower(static_cast<char>(c)));
      c = next();
    }
    while (c == ' ' || c == '\t') c = next();
    value_.clear();
    const bool implicit = c == '\n';
    const char* error = nullptr;
    if (!implicit) error = c == '=' ? value() : "bad config line";
    if (nul_) return "a NUL byte";
    if (error != nullptr) return error;
    const GitConfigRule* rule = nullptr;
    if (allowed(rules_, name_, value_, implicit, rule)) return nullptr;
    if (result_.scan.findings.size() == kMaxGitConfigFindings)
      return "too many entries off the allowlist";
    keep(rule, implicit, key_begin, first_line);
    return nullptr;
  }

  /// parse_value(): leading spaces skipped, trailing ones trimmed (unless quoted or escaped),
  /// `"` toggles quoting, `#` and `;` outside quotes start a comment, escapes `\n` `\t` `\b`
  /// `\\` `\"`, a backslash at the line end continues the value. The error, or nullptr.
  const char* value() {
    bool quote = false;
    bool comment = false;
    std::size_t trim_length = 0;  // 0: nothing to trim (git's trim_len)
    for (;;) {
      int c = next();
      if (c == '\n') {
        if (quote) return "unterminated quoted value";
        if (trim_length != 0) value_.resize(trim_length);
        return nullptr;
      }
      if (comment) continue;
      if (is_git_space(c) && !quote) {
        if (trim_length == 0) trim_length = value_.size();
        if (!value_.empty()) value_.push_back(static_cast<char>(c));
        continue;
      }
      if (!quote && (c == ';' || c == '#')) {
        comment = true;
        continue;
      }
      trim_length = 0;
      if (c == '\\') {
        c = next();
        switch (c) {
          case '\n':
            continue;
          case 't':
            c = '\t';
            break;
          case 'b':
            c = '\b';
            break;
          case 'n':
            c = '\n';
            break;
          case '\\':
          case '"':
            break;
          default:
            return "invalid escape sequence in value";
        }
        value_.push_back(static_cast<char>(c));
        continue;
      }
      if (c == '"') {
        quote = !quote;
        continue;
      }
      value_.push_back(static_cast<char>(c));
    }
  }

  /// Keeps the entry just parsed (name_ = value_) as a finding, with its span.
  void keep(const GitConfigRule* rule, bool implicit, std::size_t key_begin,
            std::size_t first_line) {
    EntrySpan span{line_begin_of(text_, key_begin), key_begin, pos_, pos_};
    if (!at_end_) {
      span.value_end = pos_ - 1;
      if (span.value_end > 0 && text_[span.value_end - 1] == '\r') --span.value_end;
    }
    const std::size_t last_line = at_end_ ? line_ : line_ - 1;
    result_.scan.findings.push_back({name_, value_, implicit, first_line, last_line, rule});
    result_.spans.push_back(span);
  }

  std::string_view text_;
  const std::vector<GitConfigRule>& rules_;
  std::size_t pos_ = 0;
  std::size_t line_ = 0;  ///< 0-based: the `\n` read so far
  bool at_end_ = false;
  bool nul_ = false;
  std::string name_;             ///< "section.sub." then the variable (git's var strbuf)
  std::size_t base_length_ = 0;  ///< the length of "section.sub." in name_
  std::string value_;
  ParsedConfig result_;
};

bool is_blank(std::string_view text) {
  return std::ranges::all_of(text,
                             [](char c) { return is_git_space(static_cast<unsigned char>(c)); });
}

/// The bytes without_findings() removes for one entry: its whole lines when nothing else
/// stands before its key, else from the key (and the spaces before it) to its value's end.
std::pair<std::size_t, std::size_t> removed_range(std::string_view text, const EntrySpan& span) {
  if (is_blank(text.substr(span.line_begin, span.key_begin - span.line_begin)))
    return {span.line_begin, span.end};
  std::size_t begin = span.key_begin;
  while (begin > span.line_begin && is_git_space(static_cast<unsigned char>(text[begin - 1])))
    --begin;
  return {begin, span.value_end};
}

/// `text` without the entries of `findings` among those `parsed` found (without_findings()).
std::string without_parsed(std::string_view text, const ParsedConfig& parsed,
                           const std::vector<GitConfigFinding>& findings) {
  std::set<std::pair<std::size_t, std::string_view>> wanted;
  for (const auto& finding : findings) wanted.emplace(finding.first_line, finding.key);
  std::string out;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < parsed.spans.size(); ++i) {
    const auto& finding = parsed.scan.findings[i];
    // A malformed text loses every entry off the allowlist of the part kept (the promise of a
    // sanitised copy holds even for findings the caller did not pass).
    if (!parsed.scan.malformed && !wanted.contains({finding.first_line, finding.key})) continue;
    const auto [begin, end] = removed_range(text, parsed.spans[i]);
    if (end > parsed.kept_end) break;
    out.append(text.substr(copied, begin - copied));
    copied = end;
  }
  if (copied < parsed.kept_end) out.append(text.substr(copied, parsed.kept_end - copied));
  return out;
}

}  // namespace

GitConfigScan scan_git_config(std::string_view text, GitConfigFile file) {
  return ConfigParser(text, rules_of(file)).run().scan;
}

GitConfigScan read_git_config(std::string_view text) {
  static const std::vector<GitConfigRule> kNoRules;
  return ConfigParser(text, kNoRules).run().scan;
}

std::vector<GitConfigFinding> added_not_allowed(const GitConfigScan& before,
                                                const GitConfigScan& after) {
  std::vector<GitConfigFinding> added;
  for (const auto& finding : after.findings) {
    const bool known = std::ranges::any_of(
        before.findings, [&](const GitConfigFinding& old) { return old.same_entry(finding); });
    if (!known) added.push_back(finding);
  }
  return added;
}

std::string without_findings(std::string_view text, const std::vector<GitConfigFinding>& findings,
                             GitConfigFile file) {
  return without_parsed(text, ConfigParser(text, rules_of(file)).run(), findings);
}

std::string without_entries(std::string_view text, const std::vector<GitConfigFinding>& entries) {
  static const std::vector<GitConfigRule> kNoRules;
  return without_parsed(text, ConfigParser(text, kNoRules).run(), entries);
}

}  // namespace pisandbox::policy
