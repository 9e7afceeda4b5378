// pisandbox::policy — the git configuration keys that make a host git run a program or read
// another file (pure: no syscalls, no I/O).
//
// A sandboxed command may write `.git/config` of the repositories in its workspace (`git
// remote set-url`, `git push -u` and submodules need it), but `git config core.fsmonitor
// 'touch /tmp/pwned'` there makes the next host `git status` run that command. The supervisor
// watches each `.git/config` and, when a change adds a dangerous entry (or changes the value of
// one), restores the previous content. This file is the pure part it uses: a faithful port of
// git's configuration parser (config.c, git_parse_source) that finds the entries matching
// dangerous_git_config_rules(). docs/security.md ("The git configuration guard") lists the
// rules with their reasons.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// When a rule's key is dangerous, by its value (git-config(1) "Values" for the booleans).
enum class GitValueCondition {
  Any,                     ///< every value
  NotBoolean,              ///< a value that is not a git boolean (a boolean selects a built-in)
  NotFalse,                ///< any value but a false boolean (`false`, `no`, `off`, `0`, empty)
  NotNever,                ///< any value but `never` (protocol.*.allow)
  ShellCommand,            ///< a value starting with `!` after leading whitespace
  CommandTransport,        ///< a URL of the `ext::` or `fd::` transport (git-remote-ext(1))
  PathLike,                ///< a value containing `/` or starting with `~` (a program, not a host)
  BaseIsCommandTransport,  ///< the subsection (url.<base>) is an `ext::` or `fd::` URL
};

/// One documented rule: which keys are dangerous, when, and why.
///   pattern: as git-config(1) spells the key, `*` standing for a subsection
///     ("includeIf.*.path", "core.fsmonitor").
///   section, subsection, variable: the match, lowercase; subsection "" means the key has
///     none, "*" any, "?" with or without one, anything else that subsection (compared
///     case-insensitively, which is wider than git's exact comparison); variable "*" means
///     any variable.
///   condition: which values make the key dangerous.
///   reason: what host git does with the value, and the git-config(1) item it comes from.
struct GitConfigRule {
  std::string_view pattern;
  std::string_view section;
  std::string_view subsection;
  std::string_view variable;
  GitValueCondition condition = GitValueCondition::Any;
  std::string_view reason;
};

/// One key=value of a git configuration text that makes git run a program or read a file.
///   key: canonical as `git config --list` prints it: section and variable lowercased,
///     subsection kept as written ("core.fsmonitor", "alias.st", "includeif.gitdir:~/w/.path",
///     "remote.origin.uploadpack", "filter.lfs.process"); the deprecated `[section.sub]` form
///     gives a lowercased subsection, as in git.
///   value: the value after git's unquoting and escape processing; a key with no `=` is the
///     implicit boolean true: value "" and implicit = true.
///   first_line, last_line: 0-based range of lines (separated by `\n`) of the entry in the
///     text, continuation lines included; the first line may also hold a section header.
///   rule: the GitConfigRule that matched (static storage).
struct GitConfigFinding {
  std::string key;
  std::string value;
  bool implicit = false;
  std::size_t first_line = 0;
  std::size_t last_line = 0;
  const GitConfigRule* rule = nullptr;

  /// Same entry for the guard: key, value and implicit (not the place nor the rule).
  [[nodiscard]] bool same_entry(const GitConfigFinding& other) const {
    return key == other.key && value == other.value && implicit == other.implicit;
  }
};

/// The dangerous entries of a configuration text, in document order.
///   malformed: git would refuse the text (its parser stops with "bad config line N"), or the
///     text holds a NUL byte, a section header longer than kMaxGitSectionHeaderBytes, or more
///     than kMaxGitConfigFindings dangerous entries. findings then hold the dangerous entries
///     before the point where parsing stopped; the caller treats the whole file as suspicious.
///   malformed_reason: "line <1-based>: <what>", e.g. "line 3: unterminated quoted value".
struct GitConfigScan {
  std::vector<GitConfigFinding> findings;
  bool malformed = false;
  std::string malformed_reason;
};

/// Longest section header accepted, in bytes from `[` to `]` (a URL or path subsection is far
/// shorter); longer is reported malformed so the findings' keys stay bounded.
inline constexpr std::size_t kMaxGitSectionHeaderBytes = 4096;
/// Most dangerous entries reported; more is reported malformed (a real file has a handful).
inline constexpr std::size_t kMaxGitConfigFindings = 1024;

/// The dangerous entries of `text` (a whole git configuration file, any bytes). Never throws
/// (but std::bad_alloc); linear in the size of `text`. The syntax is git-config(1)
/// "CONFIGURATION FILE" / "Syntax" as config.c parses it: `[section]`, `[section "sub"]`
/// (escapes `\"` `\\`, any other `\x` is `x`), `[section.sub]`, keys `[A-Za-z][A-Za-z0-9-]*`
/// case-insensitive, `key = value`, `key` alone, `#`/`;` comments, quoted values, escapes `\"`
/// `\\` `\n` `\t` `\b`, continuation lines, a UTF-8 BOM at the start, CRLF line ends.
[[nodiscard]] GitConfigScan scan_git_config(std::string_view text);

/// The findings of `after` that are not in `before` (GitConfigFinding::same_entry): what a
/// change added, or changed the value of. An unchanged dangerous entry is not reported, even if
/// it moved.
[[nodiscard]] std::vector<GitConfigFinding> added_dangerous(const GitConfigScan& before,
                                                            const GitConfigScan& after);

/// A sanitised copy of `text` without the entries of `findings` (for a repository created
/// during the command, which has no previous content to restore). `findings` are matched to
/// the entries of `text` by first_line and key, so they must come from scan_git_config(text).
/// An entry alone on its lines goes with its lines (their line ends included); an entry that
/// shares its first line with a section header (`[core] fsmonitor = x`) is cut from its key to
/// the end of its last line, the header and the line end staying. If `text` is malformed, only
/// the part before the line where parsing stopped is kept (the rest, which git would never
/// read, is dropped), minus the findings: the result always scans as well-formed.
[[nodiscard]] std::string without_findings(std::string_view text,
                                           const std::vector<GitConfigFinding>& findings);

/// Every rule, in the order of docs/security.md ("Keys that make git run or read something").
[[nodiscard]] const std::vector<GitConfigRule>& dangerous_git_config_rules();

/// The rules as one line each, for docs and `pi-sandbox policy`: the pattern, then the
/// condition in parentheses when not every value is dangerous ("core.fsmonitor (unless a
/// boolean)").
[[nodiscard]] const std::vector<std::string_view>& dangerous_git_config_patterns();

}  // namespace pisandbox::policy
