// pisandbox::shell — a simple command seen the way the hard-deny rules need it: the
// real program behind wrappers like `sudo` and `env`, and its options parsed getopt-style.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shell/shell_command.hpp"

namespace pisandbox::shell {

/// A simple command with its wrappers and leading assignments taken off:
/// `sudo -u root env A=1 nice -n 5 /bin/rm -rf /` has program `rm`, args `-rf /` and
/// assignments `A=1`.
///   program:     the last path component of the command word; empty when the command
///                only assigns or redirects.
///   args:        the words after the command word.
///   assignments: `NAME=value` words before the command word (and those given to `env`,
///                `export`, `declare`, `typeset`, `local`, `readonly`).
///   redirects:   the simple command's redirections.
struct CommandView {
  std::string program;
  std::vector<std::string> args;
  std::vector<std::string> assignments;
  std::vector<Redirect> redirects;
};

/// Looks through shell keywords (`if`, `then`, `!`, `{`, …) and the wrappers `sudo`,
/// `doas`, `env`, `command`, `builtin`, `exec`, `nohup`, `time`, `nice`, `ionice`,
/// `timeout`, `stdbuf`, `xargs`, `busybox` (with their own options) to the program run.
[[nodiscard]] CommandView view_command(const SimpleCommand& command);

/// True for a `NAME=value` (or `NAME+=value`) word, NAME being a shell identifier.
[[nodiscard]] bool is_assignment(std::string_view word);

/// True when `word` is one of `list` (exact comparison).
[[nodiscard]] bool is_one_of(std::string_view word, std::span<const std::string_view> list);

/// `text` with ASCII letters lowercased (other bytes unchanged).
[[nodiscard]] std::string ascii_lowercase(std::string_view text);

/// Which options of a program take a value (getopt rules: `-xVALUE`, `-x VALUE`,
/// `--name=VALUE`, `--name VALUE`).
///   short_with_value: the letters of short options that take a value, e.g. "oH".
///   long_with_value:  the long options that take a value, with their dashes.
struct OptionSpec {
  std::string_view short_with_value;
  std::span<const std::string_view> long_with_value;
};

/// One argument after getopt-style parsing.
///   kind:  a short option (`-k`, also each letter of `-sSk`), a long option
///          (`--insecure`, `--output=x`) or an operand.
///   text:  the option's name (`k`, `--insecure`) or the operand itself.
///   value: the option's value when it takes one (nullopt for flags and operands).
struct Argument {
  enum class Kind { ShortOption, LongOption, Operand };
  Kind kind;
  std::string text;
  std::optional<std::string> value;
};

/// Parses `args` getopt_long-style (options may follow operands; `--` ends options; `-`
/// is an operand). A long option given as `--name=value` always carries its value.
[[nodiscard]] std::vector<Argument> parse_arguments(std::span<const std::string> args,
                                                    const OptionSpec& spec);

/// The operands of `view`, reading every option as a flag (right for `rm`, `tee`,
/// `chmod`, … whose common options take no value).
[[nodiscard]] std::vector<std::string> operands_of(const CommandView& view);

}  // namespace pisandbox::shell
