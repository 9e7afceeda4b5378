// pisandbox::shell — the option tables of the network programs the hard-deny rules
// read closely (curl, wget, rsync). Used only by the hard-deny rules.
#pragma once

#include <span>
#include <string_view>

#include "shell/command_view.hpp"

namespace pisandbox::shell {

/// How the rules read one program's arguments.
///   spec:     which options take a value, for parse_arguments().
///   writes:   options whose value is a file the program writes (`curl -o`, `wget -O`),
///             named as parse_arguments() names them (`o`, `--output`).
///   not_sent: options whose value is neither read nor sent (`rsync --exclude PATTERN`).
struct ProgramOptions {
  OptionSpec spec;
  std::span<const std::string_view> writes;
  std::span<const std::string_view> not_sent;
};

/// The table for `curl`, `wget` or `rsync`; nullptr for any other program.
[[nodiscard]] const ProgramOptions* program_options(std::string_view program);

}  // namespace pisandbox::shell
