// pisandbox::shell — a shell command line split into pipelines, commands, words and
// redirections, for the hard-deny rules (compatibility C76–C77).
//
// This is not a shell: it never expands anything. It follows the POSIX shell grammar far
// enough that a rule looks at real command words (so `echo rm -rf /` is not `rm`), and it
// keeps what it cannot interpret (`$HOME`, globs) as literal text. Command substitutions
// (`$(…)`, `…`, `<(…)`, `>(…)`) stay in their word *and* are returned separately so the
// rules can look inside them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::shell {

/// What a redirection does with its target.
enum class RedirectKind {
  Input,       ///< `<file`
  Output,      ///< `>file`, `>|file`, `&>file`, `<>file`
  Append,      ///< `>>file`, `&>>file`
  HereDoc,     ///< `<<DELIM` / `<<-DELIM`: target is the document's body
  HereString,  ///< `<<<word`
  Duplicate,   ///< `>&2`, `<&0`, `>&-`
};

/// One redirection of a simple command.
///   target: the word after the operator, quotes removed; for HereDoc, the body (lines up
///           to the delimiter line, each ending in "\n").
struct Redirect {
  RedirectKind kind;
  std::string target;

  friend bool operator==(const Redirect&, const Redirect&) = default;
};

/// One simple command: its words with quotes removed (`"a b"` is one word `a b`) and its
/// redirections. Assignments (`NAME=value`) are ordinary words here.
struct SimpleCommand {
  std::vector<std::string> words;
  std::vector<Redirect> redirects;

  friend bool operator==(const SimpleCommand&, const SimpleCommand&) = default;
};

/// Simple commands joined by `|` or `|&`, in order.
struct Pipeline {
  std::vector<SimpleCommand> commands;

  friend bool operator==(const Pipeline&, const Pipeline&) = default;
};

/// A parsed command line.
///   pipelines:     separated by `;`, `&`, `&&`, `||` or a newline, in order. `(`, `)`,
///                  `{`, `}` and keywords are not structure here: parentheses end a simple
///                  command, braces and keywords (`if`, `then`, …) stay as words.
///   substitutions: the text inside every `$(…)`, `…`, `<(…)` and `>(…)`, outermost
///                  first, including those in here-documents with an unquoted delimiter.
struct ShellScript {
  std::vector<Pipeline> pipelines;
  std::vector<std::string> substitutions;
};

/// Splits `text` as a POSIX shell would, without expanding anything. Never fails: an
/// unterminated quote or substitution runs to the end of the text.
[[nodiscard]] ShellScript parse_shell(std::string_view text);

/// The words of every simple command of `text` (parse_shell(): quotes removed, redirections
/// left out), each command's followed by a word `;`, so that a reader of one command's words
/// stops where it ends (`git stash 2>&1 | tail -3` gives `git stash ; tail -3 ;`). A word that
/// holds a command separator or a blank but no `$` or backquote (the text of `sh -c 'cd .. &&
/// git pull'`) and the text of each substitution are taken apart the same way after it, two
/// levels deep at most.
/// Never fails.
[[nodiscard]] std::vector<std::string> command_words(std::string_view text);

}  // namespace pisandbox::shell
