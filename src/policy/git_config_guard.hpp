// pisandbox::policy — the git configuration keys a sandboxed command may add or change: the
// allowlist of keys that run nothing (pure: no syscalls, no I/O).
//
// A sandboxed command may write `.git/config` of the repositories in its workspace (`git
// remote add`, `git push -u` and submodules need it), but `git config core.fsmonitor
// 'touch /tmp/pwned'` there makes the next host `git status` run that command, and every git
// extension brings keys of its own (`lfs.extension.<x>.clean`). So a change may add or alter
// only keys of a documented list whose values are data (identity, remotes and branches, the
// repository's format, submodule URLs, what git clone, git submodule add and git lfs install
// write); the supervisor watches each `.git/config` and takes every other added or changed
// entry back out. This file is the pure part it uses: a faithful port of git's configuration
// parser (config.c, git_parse_source) that finds the entries off allowed_git_config_rules().
// docs/security.md ("The git configuration guard") lists the rows with their reasons.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::policy {

/// Which file a configuration text is, which chooses its allowlist.
///   Config: a repository's `config` or `config.worktree` (allowed_git_config_rules());
///   Gitmodules: `.gitmodules` at the root of a working tree, of which git reads only
///     `submodule.<name>.*` keys (gitmodules(5); allowed_gitmodules_rules()).
enum class GitConfigFile { Config, Gitmodules };

/// Which values an allowlist row accepts (git-config(1) "Values" for the booleans).
enum class GitValueCondition {
  Any,                  ///< every value: the key holds data whatever its value
  Boolean,              ///< a git boolean (true, yes, on, false, no, off, empty, a decimal)
  Scalar,               ///< a git boolean or a decimal integer with an optional k, m or g unit
  NotShellCommand,      ///< any value but one starting with `!` after leading whitespace
  NotCommandTransport,  ///< any URL but one of the `ext::` or `fd::` transport
                        ///< (git-remote-ext(1), git-remote-fd(1))
  Exactly,              ///< exactly GitConfigRule::exact
};

/// One documented row of the allowlist: which keys a command may add or change, with which
/// values, and why they run nothing.
///   pattern: as git-config(1) spells the key, `*` standing for a subsection or a variable
///     ("remote.*.url", "user.*").
///   section, subsection, variable: the match; section and variable lowercase; subsection ""
///     means the key has none, "*" any, "?" with or without one, anything else exactly that
///     subsection (compared exactly, as git does); variable "*" means any variable.
///   condition: which values are allowed; exact: the one value of Condition::Exactly.
///   reason: why the key runs nothing, and the git-config(1) item it comes from.
struct GitConfigRule {
  std::string_view pattern;
  std::string_view section;
  std::string_view subsection;
  std::string_view variable;
  GitValueCondition condition = GitValueCondition::Any;
  std::string_view reason;
  std::string_view exact = {};
};

/// One key=value of a git configuration text that the allowlist does not accept: its key is on
/// no row, or its value is outside what the row of its key accepts.
///   key: canonical as `git config --list` prints it: section and variable lowercased,
///     subsection kept as written ("core.fsmonitor", "alias.st", "includeif.gitdir:~/w/.path",
///     "remote.origin.uploadpack", "filter.lfs.process"); the deprecated `[section.sub]` form
///     gives a lowercased subsection, as in git.
///   value: the value after git's unquoting and escape processing; a key with no `=` is the
///     implicit boolean true: value "" and implicit = true.
///   first_line, last_line: 0-based range of lines (separated by `\n`) of the entry in the
///     text, continuation lines included; the first line may also hold a section header.
///   rule: the allowlist row whose key matched while its value did not (static storage), or
///     nullptr when no row names the key.
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

/// The entries off the allowlist of a configuration text, in document order.
///   malformed: git would refuse the text (its parser stops with "bad config line N"), or the
///     text holds a NUL byte, a section header longer than kMaxGitSectionHeaderBytes, or more
///     than kMaxGitConfigFindings entries off the allowlist. findings then hold those entries
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
/// Most entries off the allowlist reported; more is reported malformed (a real file has a
/// handful).
inline constexpr std::size_t kMaxGitConfigFindings = 1024;

/// The entries of `text` (a whole git configuration file, any bytes) off the allowlist. Never
/// throws (but std::bad_alloc); linear in the size of `text`. The syntax is git-config(1)
/// "CONFIGURATION FILE" / "Syntax" as config.c parses it: `[section]`, `[section "sub"]`
/// (escapes `\"` `\\`, any other `\x` is `x`), `[section.sub]`, keys `[A-Za-z][A-Za-z0-9-]*`
/// case-insensitive, `key = value`, `key` alone, `#`/`;` comments, quoted values, escapes `\"`
/// `\\` `\n` `\t` `\b`, continuation lines, a UTF-8 BOM at the start, CRLF line ends.
/// `file` chooses the allowlist (GitConfigFile); `.gitmodules` has git-config(1)'s syntax.
[[nodiscard]] GitConfigScan scan_git_config(std::string_view text,
                                            GitConfigFile file = GitConfigFile::Config);

/// Every entry of `text` (a whole git configuration file), in document order, read with the
/// syntax of scan_git_config() but without an allowlist: each entry is a finding (its `rule`
/// nullptr). For reading a configuration's values (`commit.gpgsign`, `user.signingkey`), not for
/// judging them; `malformed` as in scan_git_config() (more than kMaxGitConfigFindings entries
/// included).
[[nodiscard]] GitConfigScan read_git_config(std::string_view text);

/// The findings of `after` that are not in `before` (GitConfigFinding::same_entry): the
/// entries off the allowlist a change added, or changed the value of. An unchanged one (the
/// user's own `core.editor`, there at the start) is not reported, even if it moved.
[[nodiscard]] std::vector<GitConfigFinding> added_not_allowed(const GitConfigScan& before,
                                                              const GitConfigScan& after);

/// A sanitised copy of `text` without the entries of `findings` (for a repository created
/// during the command, which has no previous content to restore). `findings` are matched to
/// the entries of `text` by first_line and key, so they must come from scan_git_config(text).
/// An entry alone on its lines goes with its lines (their line ends included); an entry that
/// shares its first line with a section header (`[core] fsmonitor = x`) is cut from its key to
/// the end of its last line, the header and the line end staying. If `text` is malformed, only
/// the part before the line where parsing stopped is kept (the rest, which git would never
/// read, is dropped), minus the findings: the result always scans as well-formed. `file` must
/// be the one the findings were scanned with.
[[nodiscard]] std::string without_findings(std::string_view text,
                                           const std::vector<GitConfigFinding>& findings,
                                           GitConfigFile file = GitConfigFile::Config);

/// A copy of `text` without the entries of `entries`, which must come from read_git_config(text)
/// (matched by first_line and key, as without_findings() matches them; any entry, allowed or
/// not). Used for the sanitized copy of the user's configuration (docs/security.md, "Tool
/// configuration without its credentials"). A malformed `text` keeps only the part before the
/// line where parsing stopped, without any of its entries.
[[nodiscard]] std::string without_entries(std::string_view text,
                                          const std::vector<GitConfigFinding>& entries);

/// Every row of the allowlist, in the order of docs/security.md ("Keys a command may add or
/// change").
[[nodiscard]] const std::vector<GitConfigRule>& allowed_git_config_rules();

/// Every row of the allowlist of `.gitmodules` (GitConfigFile::Gitmodules), in the order of
/// docs/security.md ("Keys a command may add to .gitmodules"): `submodule.<name>.path`, `url`,
/// `branch`, `update`, `fetchRecurseSubmodules`, `ignore`, `shallow` (gitmodules(5)).
[[nodiscard]] const std::vector<GitConfigRule>& allowed_gitmodules_rules();

/// The rows as one line each, for docs and `pi-sandbox policy`: the pattern, then the
/// condition in parentheses when not every value is allowed ("remote.*.url (not an ext:: or
/// fd:: URL)").
[[nodiscard]] const std::vector<std::string_view>& allowed_git_config_patterns();

}  // namespace pisandbox::policy
