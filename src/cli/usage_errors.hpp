// pisandbox::cli — unknown commands and options, named with the nearest known spelling.
//
// CLI11 checks that a subcommand was given before it looks at what it did not understand, so
// `pi-sandbox rnu` would say `A subcommand is required`. The command levels (pi-sandbox,
// approvals, config, quarantine) are therefore checked here before CLI11 parses, and what a
// leaf command did not understand is named after CLI11 refused it. Precedent: git's and
// cargo's `did you mean` (Damerau-Levenshtein distance, at most 2).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pisandbox::cli {

/// Exit code of a usage error: an unknown command, option or argument.
inline constexpr int kExitUsage = 2;

/// The candidate nearest to `word` by optimal-string-alignment distance (a transposition
/// counts one edit), when that distance is at most 2 and smaller than `word`'s length;
/// the first such candidate on a tie; nullopt otherwise.
std::optional<std::string> nearest(std::string_view word, std::span<const std::string> candidates);

/// Checks the command words of `args` (argv without argv[0]) against `app`: while the current
/// command has subcommands, an option must be one of its own and a word one of its
/// subcommands. Stops at `--` and at the first command without subcommands (CLI11 checks its
/// arguments). Returns the message without the `pi-sandbox: ` prefix, e.g.
///   `unknown command 'rnu' (did you mean 'run'?)`,
///   `unknown command 'chek' for 'approvals' (did you mean 'check'?)`,
///   `unknown command 'xyz' (see 'pi-sandbox --help')`,
///   `unknown option '--verison' (did you mean '--version'?)`;
/// nullopt when every command word is known. Hidden commands (empty group) are accepted
/// but never suggested.
std::optional<std::string> unknown_command(const CLI::App& app, std::span<const std::string> args);

/// After CLI11 threw CLI::ExtrasError for `app`: the message for the first argument that a
/// parsed command did not take, e.g. `unknown option '--cwdd' for 'run' (did you mean
/// '--cwd'?)` or `unexpected argument 'x' for 'doctor' (see 'pi-sandbox doctor --help')`.
std::string describe_extras(const CLI::App& app);

}  // namespace pisandbox::cli
